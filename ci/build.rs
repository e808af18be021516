//! Link step of the release binaries: static musl builds of the release
//! profile (`panic = "abort"`: ci/build-release's five targets) are
//! linked without call frame tables and with std's backtrace printer in a
//! range of its own (ci/release.ld says why), and built with the cfg
//! `headroom_cold`, which tells tick/footprint.rs that the range's
//! bounds are there to read. Other
//! builds (the dev profile, which unwinds; the host's) are linked as cargo
//! would. (Cargo's `CARGO_CFG_PANIC` is the target's default strategy,
//! not the profile's: the profile is told by `PROFILE`.)

fn main() {
    println!("cargo::rerun-if-changed=ci/release.ld");
    println!("cargo::rustc-check-cfg=cfg(headroom_cold)");
    let is = |key: &str, want: &str| std::env::var(key).is_ok_and(|v| v == want);
    if is("CARGO_CFG_TARGET_OS", "linux")
        && is("CARGO_CFG_TARGET_ENV", "musl")
        && is("PROFILE", "release")
    {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo::rustc-link-arg-bins=-T{dir}/ci/release.ld");
        println!("cargo::rustc-cfg=headroom_cold");
    }
}
