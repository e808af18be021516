#!/usr/bin/env python3
# Writes the crafted CSVs of the summary tests (issue 25):
#   gen-summary-csvs.py none  > host-bound.csv    a 3.8 GiB host near OOM, no cgroup
#   gen-summary-csvs.py loose > cgroup-loose.csv  the same in an 8 GiB cgroup that never binds
#   gen-summary-csvs.py bind  > cgroup-1g.csv     a 1 GiB cgroup on a 22 GiB host: the cgroup binds
# host-bound.summary.txt is the summary headroom wrote for host-bound.csv
# before issue 25; it must not change.
import sys, time
hdr = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,swap_total_mb,zram_stored_mb,zram_ram_mb,tmp_avail_mb,tmp_pct,disk_avail_mb,oom_kills,cg_mem_avail_mb,psi_mem_some_avg10,peak_rss_mb,peak_rss_comm,build_peak_rss_mb,build_peak_rss_comm,swap_in_mibps,swap_out_mibps,majflt_ps,refaults_ps,disk_read_mibps,disk_write_mibps,disk_util_pct,cpu_temp_c,cpu_freq_pct,throttled,cg_mem_limit_mb"
def rows(cg):
    t0 = 1796000000
    used = [900, 1500, 2300, 3100, 3650, 3790, 3400, 2200, 1200, 950]
    out = [hdr]
    for i, u in enumerate(used):
        e = t0 + 5 * i
        avail = 3800 - u
        total = 3800
        if cg not in ("none", "loose"):
            # A 1 GiB cgroup on a 24 GiB host: the host has room throughout.
            avail = 22000 - u
            total = 22000
        swap = max(0, u - 3000)
        zs = max(0, u - 2800)
        stage = ["configure", "compile", "compile", "compile", "link", "link", "link", "link", "install", "install"][i]
        ctx = ["-- Configuring", "[ 10%] Building CXX object a.o", "[ 30%] Building CXX object b.o", "[ 60%] Building CXX object c.o", "[ 90%] Linking CXX executable app", "[ 90%] Linking CXX executable app", "[ 95%] Linking CXX executable app2", "[ 95%] Linking CXX executable app2", "Installing: /usr/bin/app", "Installing: /usr/bin/app"][i]
        kills = 0 if i < 5 else 1
        if cg == "none":
            cga, cgl = "", ""
        elif cg == "loose":
            cga, cgl = str(6000 - u), "8192"
        else:
            cga, cgl = cg(u)
        sin = "0.00" if i < 4 else "12.50"
        maj = 20 if i < 4 else 400
        temp = "61.0" if i < 3 else "71.5"
        out.append(f"{e},{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(e))},{5*i},{1.0 + i/4:.2f},{min(100, 40 + 10*i)},{u},{avail},{u*100//total},{swap},12,60,{(i % 4)},{stage},\"{ctx}\",2048,{zs},{zs//3},900,10,12288,{kills},{cga},0.{i}0,{300 + 40*i},cc1plus,{250 + 40*i},cc1plus,{sin},0.00,{maj},{maj//2},1.00,2.00,30,{temp},90,,{cgl}")
    return "\n".join(out) + "\n"
kind = sys.argv[1]
if kind == "bind":
    # A 1 GiB cgroup: use = 60 % of the host's + file cache reclaimed.
    print(rows(lambda u: (str(max(0, 1024 - (u * 25 // 100))), "1024")), end="")
else:
    print(rows(kind), end="")
