//! The words WHY IT WAS SLOW advises with, one per finding, and for the
//! disk findings one per kind of build disk ([`Device`]: a card gets card
//! advice, a VM's disk the host's storage, a network file system a local
//! disk); and the summary's `    device: ` line that `summarize` reads
//! back. Text only: the findings are [`super::why_slow`]'s.

use ufmt::{uWrite, uwrite};

use crate::kernel::blockdev::Device;

/// One line of advice per finding: swap thrash.
pub const ADVICE_ZRAM: &str = "zram instead of swap on a disk (zram-tools, or systemd's zram-generator): disk swap is slow, and wears an SD card out";
/// Swap thrash when the swap is zram already.
pub const ADVICE_FEWER_JOBS: &str =
    "swap is zram already: fewer jobs (headroom jobs, or run --jobserver) or more RAM";
/// File-page thrash, before the `-j` that fits.
pub const ADVICE_FILE_THRASH: &str = "too many jobs for the memory";
/// A busy SD/eMMC card ([`disk_advice`]).
pub const ADVICE_DISK: &str = "a faster card (A2 class) or a USB SSD for the build directory";
/// A busy disk whose kind is unknown (`summarize` of a CSV alone) or none
/// of the others: advice for any disk.
pub const ADVICE_DISK_ANY: &str = "the build disk was saturated: fewer jobs, or a faster disk (or a tmpfs, when RAM allows) for the build directory";
/// A disk busy only with the reads of file-page thrash.
pub const ADVICE_DISK_THRASH: &str = "fewer jobs, as for the thrashing above (a faster disk would only read the evicted pages faster)";
/// A stalled disk whose kind is unknown ([`stall_advice`]).
pub const ADVICE_STALL: &str = "the build disk stopped answering: look in dmesg for I/O timeouts and resets (mmc, usb, nvme, ata, virtio)";

/// The advice for a busy build disk of kind `device` (`None`: unknown,
/// [`ADVICE_DISK_ANY`]); the card's ([`ADVICE_DISK`]) only for a card.
pub fn disk_advice(device: Option<Device>) -> &'static str {
    match device {
        Some(Device::Card) => ADVICE_DISK,
        Some(Device::Usb) => {
            "an SSD on a USB 3 port (not a stick or a hard disk) for the build directory, or a tmpfs when RAM allows"
        }
        Some(Device::Nvme) => {
            "the NVMe disk was saturated: fewer jobs, or the build directory on a tmpfs when RAM allows"
        }
        Some(Device::Sata) => {
            "the disk was saturated: fewer jobs, or an SSD for the build directory (a hard disk seeks between the jobs' files)"
        }
        Some(Device::Virtual) => {
            "a VM's disk is the host's storage: a faster disk or a higher I/O limit for the VM on the host, or the build directory on a tmpfs or another disk"
        }
        Some(Device::Network) => {
            "the build directory is on a network file system: build on a local disk"
        }
        Some(Device::Other) | None => ADVICE_DISK_ANY,
    }
}

/// The advice for a stalled build disk of kind `device` (`None`:
/// unknown, [`ADVICE_STALL`]).
pub fn stall_advice(device: Option<Device>) -> &'static str {
    match device {
        Some(Device::Card) => {
            "the card stopped answering: look in dmesg for mmc timeouts and resets; replace a card that hangs"
        }
        Some(Device::Usb) => {
            "the USB disk stopped answering: look in dmesg for USB resets; give it a powered hub or another cable"
        }
        Some(Device::Nvme) => {
            "the NVMe disk stopped answering: look in dmesg for nvme timeouts and controller resets"
        }
        Some(Device::Sata) => {
            "the disk stopped answering: look in dmesg for ata or scsi timeouts and link resets; check its cable"
        }
        Some(Device::Virtual) => {
            "the VM's disk stopped answering: the host's storage stalled; look at the host (its disks, the VM's I/O limits) and in dmesg for virtio timeouts"
        }
        Some(Device::Network) => {
            "the network file system stopped answering: check the server and the network, or build on a local disk"
        }
        Some(Device::Other) | None => ADVICE_STALL,
    }
}

/// The `    device: …` line of the disk sections: the kind's words
/// ([`Device::words`], read back by [`device_in`]) or that it is unknown.
pub(super) fn device_line<W: uWrite>(w: &mut W, device: Option<Device>) -> Result<(), W::Error> {
    match device {
        Some(d) => uwrite!(w, "{}{}\n", DEVICE_LINE, d.words()),
        None => uwrite!(
            w,
            "{}unknown (a CSV does not say; the advice is for any disk)\n",
            DEVICE_LINE
        ),
    }
}

/// The start of the disk sections' device line.
pub const DEVICE_LINE: &str = "    device: ";

/// The build disk's kind a summary's text `summary` names on its
/// [`DEVICE_LINE`], for `summarize` to keep: `None` when it names none.
pub fn device_in(summary: &str) -> Option<Device> {
    summary
        .lines()
        .find_map(|l| l.strip_prefix(DEVICE_LINE))
        .and_then(Device::from_words)
}
/// Heat or throttling.
pub const ADVICE_HEAT: &str = "a heatsink and fan, or fewer jobs";
/// Under-voltage.
pub const ADVICE_POWER: &str =
    "a 5 V 3 A (Pi 4) or 5 V 5 A (Pi 5) power supply, and a short thick cable";
