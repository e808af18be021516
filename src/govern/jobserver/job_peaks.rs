//! TEMPORARY stub of the per-job peak table (the job-peaks branch replaces it).
#![allow(missing_docs)]
use heapless::Vec;
pub const KEY_LEN: usize = 96;
pub const KEYS_CAP: usize = 512;
pub type Key = Vec<u8, KEY_LEN>;
pub fn key(bytes: &[u8]) -> Key {
    let from = bytes.len().saturating_sub(KEY_LEN);
    let mut k = Key::new();
    for &b in &bytes[from..] {
        let _ = k.push(if b < 0x20 || b == 0x7f || b == b'\\' {
            b'?'
        } else {
            b
        });
    }
    k
}
#[derive(Clone, Debug)]
pub struct Entry {
    pub key: Key,
    pub peak_mb: u32,
}
pub struct JobPeaks {
    entries: Vec<Entry, KEYS_CAP>,
    others_mb: u64,
}
impl Default for JobPeaks {
    fn default() -> Self {
        JobPeaks::new()
    }
}
impl JobPeaks {
    pub const fn new() -> JobPeaks {
        JobPeaks {
            entries: Vec::new(),
            others_mb: 0,
        }
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn get(&self, key: &[u8]) -> Option<(usize, u64)> {
        let i = self
            .entries
            .binary_search_by(|e| e.key.as_slice().cmp(key))
            .ok()?;
        Some((i, u64::from(self.entries[i].peak_mb)))
    }
    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }
    pub fn set(&mut self, key: &[u8], peak_mb: u64) {
        let mb = u32::try_from(peak_mb.clamp(1, 1 << 24)).unwrap_or(1);
        match self.entries.binary_search_by(|e| e.key.as_slice().cmp(key)) {
            Ok(i) => self.entries[i].peak_mb = mb,
            Err(i) => {
                let e = Entry {
                    key: self::key(key),
                    peak_mb: mb,
                };
                if self.entries.insert(i, e).is_err() {
                    self.others_mb = self.others_mb.max(u64::from(mb));
                }
            }
        }
    }
    pub fn others_mb(&self) -> u64 {
        self.others_mb
    }
}
