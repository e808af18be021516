//! Link step of the release binaries: static musl builds of the release
//! profile (`panic = "abort"`: ci/build-release's five targets) are
//! linked without call frame tables and with the code no recording runs
//! in a range of its own (ci/release.ld says why), x86_64's also without
//! the exception tables that only those call frame tables pointed to
//! (ci/no-lsda.ld); they are built with the cfg `headroom_cold`, which
//! tells tick/footprint.rs that the range's bounds are there to read.
//! Other builds (the dev profile, which unwinds; the host's) are linked as
//! cargo would. (Cargo's `CARGO_CFG_PANIC` is the target's default
//! strategy, not the profile's: the profile is told by `PROFILE`.)

fn main() {
    println!("cargo::rerun-if-changed=ci/release.ld");
    println!("cargo::rerun-if-changed=ci/no-lsda.ld");
    println!("cargo::rustc-check-cfg=cfg(headroom_cold)");
    let is = |key: &str, want: &str| std::env::var(key).is_ok_and(|v| v == want);
    if is("CARGO_CFG_TARGET_OS", "linux")
        && is("CARGO_CFG_TARGET_ENV", "musl")
        && is("PROFILE", "release")
    {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo::rustc-link-arg-bins=-T{dir}/ci/release.ld");
        println!("cargo::rustc-cfg=headroom_cold");
        // The exception tables too, where .eh_frame was the only thing
        // pointing to them. x86_64 only, the target it was checked on; on
        // 32-bit ARM .ARM.extab points to them (ci/no-lsda.ld).
        if is("CARGO_CFG_TARGET_ARCH", "x86_64") {
            println!("cargo::rustc-link-arg-bins=-T{dir}/ci/no-lsda.ld");
        }
    }
}
