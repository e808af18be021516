//! Zstandard streams and the varint-length-delimited protobuf records in
//! them: the framing of a Buck2 event log (`*_events.pb.zst`) and a Bazel
//! compact execution log.
//!
//! # References
//! - Buck2 `app/buck2_event_log/src/writer.rs` (a zstd encoder over the
//!   file), `write.rs` (`encode_length_delimited` of each record),
//!   `app/buck2_cli_proto/src/protobuf_util.rs` (`ProtobufSplitter`: a
//!   varint length, then that many bytes).
//! - Bazel `CompactSpawnLogContext.java` (a `ZstdOutputStream`, each
//!   `ExecLogEntry` written delimited).
//! - RFC 8878 (zstd frames; several frames may follow each other, and
//!   skippable frames may be among them).

use core::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::string::{String, ToString};
use std::vec::Vec;

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

/// The first four bytes of a zstd frame (RFC 8878 `Magic_Number`
/// 0xFD2FB528, little-endian).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The longest record read, bytes (256 MiB): far above any Buck2 event or
/// Bazel entry (Buck2 drops its buffer above 1 MB), low enough that a
/// corrupt length is reported, not believed.
pub const MAX_RECORD: u64 = 256 << 20;

/// What went wrong in the compressed stream, carried inside an
/// `io::Error` from [`Zstd::read`].
#[derive(Debug)]
pub struct ZstdFault {
    /// The compressed input ended inside a frame (a log still being
    /// written, or its writer killed).
    pub truncated: bool,
    /// Compressed bytes consumed when it happened.
    pub at: u64,
    /// The decoder's words.
    pub what: String,
}

impl fmt::Display for ZstdFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

impl std::error::Error for ZstdFault {}

/// Counts the bytes read from `inner` and whether it has ended.
struct Counting<R> {
    inner: R,
    read: u64,
    ended: bool,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.ended = true;
        }
        self.read += n as u64;
        Ok(n)
    }
}

/// A zstd decoder over every frame of `R` in turn (skippable frames
/// skipped), as `Read`. Errors are `io::Error`s: a [`ZstdFault`] inside
/// for the stream's own faults, the source's errors as they came.
pub struct Zstd<R: Read> {
    src: BufReader<Counting<R>>,
    frame: FrameDecoder,
    in_frame: bool,
    frames: u64,
    /// The input ended inside a frame: what was decoded is being handed
    /// on; the fault is returned once it is all read.
    cut: Option<io::Error>,
}

impl<R: Read> Zstd<R> {
    /// A decoder over `src` (nothing is read yet).
    pub fn new(src: R) -> Self {
        Zstd {
            src: BufReader::new(Counting {
                inner: src,
                read: 0,
                ended: false,
            }),
            frame: FrameDecoder::new(),
            in_frame: false,
            frames: 0,
            cut: None,
        }
    }

    /// Compressed bytes consumed so far (read from the source, less what
    /// is still buffered).
    pub fn compressed_offset(&self) -> u64 {
        let c = self.src.get_ref();
        c.read.saturating_sub(self.src.buffer().len() as u64)
    }

    /// A [`ZstdFault`]: truncated when the source has ended, nothing of it
    /// is left, and the decoder's error is a read past the end.
    fn fault(&self, what: String, cause: Option<&(dyn std::error::Error + 'static)>) -> io::Error {
        let eof = core::iter::successors(cause, |e| e.source()).any(|e| {
            e.downcast_ref::<io::Error>()
                .is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof)
        });
        let truncated = eof && self.src.get_ref().ended && self.src.buffer().is_empty();
        io::Error::other(ZstdFault {
            truncated,
            at: self.compressed_offset(),
            what,
        })
    }

    /// Start the next frame. `Ok(false)` at the clean end of the input.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            if self.src.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.frame.reset(&mut self.src) {
                Ok(()) => {
                    self.frames += 1;
                    return Ok(true);
                }
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    let skipped = io::copy(
                        &mut (&mut self.src).take(u64::from(length)),
                        &mut io::sink(),
                    )?;
                    if skipped < u64::from(length) {
                        let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
                        return Err(
                            self.fault("a skippable frame is cut short".to_string(), Some(&eof))
                        );
                    }
                }
                Err(e) => {
                    let what = if self.frames == 0 {
                        std::format!("not a zstd stream: {e}")
                    } else {
                        std::format!("bad zstd frame header after frame {}: {e}", self.frames)
                    };
                    return Err(self.fault(what, Some(&e)));
                }
            }
        }
    }
}

/// The end a frame cut short is given so that the decoder lets go of the
/// window it holds back until a frame's last block (ruzstd 0.8 keeps the
/// frame's last `Window_Size` bytes unreadable until then; for a small
/// frame that is all of it): a last block,
/// raw and empty (RFC 8878 3.1.1.2: header bit 0 `Last_Block`, type 0,
/// size 0), then four bytes for a `Content_Checksum` (read only when the
/// frame has one, never checked).
const CLOSING_BLOCK: [u8; 7] = [0x01, 0, 0, 0, 0, 0, 0];

impl<R: Read> Zstd<R> {
    /// The input ended inside a frame (`fault`, truncated): end the frame
    /// with [`CLOSING_BLOCK`] so that every byte decoded from its complete
    /// blocks can be read, and keep `fault` for after them. Another
    /// fault, or a frame that cannot be closed, is returned as it is.
    fn close_cut_frame(&mut self, fault: io::Error) -> io::Result<()> {
        let truncated = fault
            .get_ref()
            .and_then(|e| e.downcast_ref::<ZstdFault>())
            .is_some_and(|f| f.truncated);
        if !truncated || !self.in_frame {
            return Err(fault);
        }
        let closing = self
            .frame
            .decode_blocks(&CLOSING_BLOCK[..], BlockDecodingStrategy::All);
        if closing.is_err() || !self.frame.is_finished() {
            return Err(fault);
        }
        self.cut = Some(fault);
        Ok(())
    }

    /// Decode until `want` bytes can be read or the frame is finished.
    fn decode_up_to(&mut self, want: usize) -> io::Result<()> {
        while self.frame.can_collect() < want && !self.frame.is_finished() {
            let more = want - self.frame.can_collect();
            if let Err(e) = self
                .frame
                .decode_blocks(&mut self.src, BlockDecodingStrategy::UptoBytes(more))
            {
                let fault = self.fault(std::format!("corrupt zstd data: {e}"), Some(&e));
                return self.close_cut_frame(fault);
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for Zstd<R> {
    /// Decompressed bytes, as soon as the decoder has them. At a cut (the
    /// input ends inside a frame) every byte decoded before it is read
    /// first, then the [`ZstdFault`] (truncated) is the error.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.cut.is_some() {
                let n = self.frame.read(buf)?;
                return match (n, self.cut.take()) {
                    (0, Some(fault)) => Err(fault),
                    (_, fault) => {
                        self.cut = fault;
                        Ok(n)
                    }
                };
            }
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            self.decode_up_to(buf.len())?;
            if self.cut.is_some() {
                continue;
            }
            let n = self.frame.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            if self.frame.is_finished() {
                self.in_frame = false;
            }
        }
    }
}

/// Why the next record could not be read.
#[derive(Debug)]
pub enum RecordError {
    /// The input ended inside a record (its length or its bytes), or the
    /// zstd stream ended inside a frame.
    Truncated,
    /// A length of more than ten varint bytes, or over 64 bits.
    BadLength,
    /// A length over [`MAX_RECORD`].
    TooLong(u64),
    /// The zstd stream is corrupt.
    Zstd(ZstdFault),
    /// The source could not be read.
    Io(io::Error),
}

impl From<io::Error> for RecordError {
    fn from(e: io::Error) -> Self {
        if e.get_ref().is_some_and(|i| i.is::<ZstdFault>()) {
            let fault = e
                .into_inner()
                .and_then(|i| i.downcast::<ZstdFault>().ok())
                .map(|b| *b);
            return match fault {
                Some(f) if f.truncated => RecordError::Truncated,
                Some(f) => RecordError::Zstd(f),
                None => RecordError::Truncated,
            };
        }
        if e.kind() == io::ErrorKind::UnexpectedEof {
            return RecordError::Truncated;
        }
        RecordError::Io(e)
    }
}

/// Varint-length-delimited records (protobuf `writeDelimitedTo` /
/// prost `encode_length_delimited`) read one by one.
pub struct Records<R: Read> {
    src: R,
    offset: u64,
    read: u64,
}

impl<R: Read> Records<R> {
    /// Records from `src` (decompressed bytes).
    pub fn new(src: R) -> Self {
        Records {
            src,
            offset: 0,
            read: 0,
        }
    }

    /// Bytes of `src` consumed so far: the offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Complete records read so far.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.src
    }

    fn byte(&mut self) -> Result<Option<u8>, RecordError> {
        let mut b = [0u8; 1];
        loop {
            match self.src.read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) => {
                    self.offset += 1;
                    return Ok(Some(b[0]));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The next record's bytes into `buf` (cleared first). `Ok(false)` at
    /// a clean end (between records).
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<bool, RecordError> {
        buf.clear();
        let mut len: u64 = 0;
        for i in 0..10u32 {
            let Some(b) = self.byte()? else {
                return if i == 0 {
                    Ok(false)
                } else {
                    Err(RecordError::Truncated)
                };
            };
            let part = u64::from(b & 0x7f);
            if i == 9 && (b > 1) {
                return Err(RecordError::BadLength);
            }
            len |= part << (7 * i);
            if b & 0x80 == 0 {
                return self.body(len, buf).map(|()| true);
            }
        }
        Err(RecordError::BadLength)
    }

    fn body(&mut self, len: u64, buf: &mut Vec<u8>) -> Result<(), RecordError> {
        if len > MAX_RECORD {
            return Err(RecordError::TooLong(len));
        }
        let got = (&mut self.src).take(len).read_to_end(buf)?;
        self.offset += got as u64;
        if (got as u64) < len {
            return Err(RecordError::Truncated);
        }
        self.read += 1;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Cursor;
    use std::process::{Command, Stdio};
    use std::vec;

    /// Compress with the `zstd` CLI (the reference encoder), as Buck2's
    /// and Bazel's writers (libzstd) do.
    pub(crate) fn zstd_cli(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut child = Command::new("zstd")
            .args(["-q", "-c", "-9"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("zstd CLI (/usr/bin/zstd) for the test");
        let mut stdin = child.stdin.take().unwrap();
        let data = data.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&data));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(out.status.success());
        out.stdout
    }

    fn delimited(records: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            prost::encoding::encode_varint(r.len() as u64, &mut out);
            out.extend_from_slice(r);
        }
        out
    }

    fn all(src: impl Read) -> Result<Vec<Vec<u8>>, RecordError> {
        let mut rs = Records::new(src);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while rs.next_into(&mut buf)? {
            out.push(buf.clone());
        }
        Ok(out)
    }

    #[test]
    fn records_round_trip_through_zstd() {
        let big = vec![7u8; 300];
        let plain = delimited(&[b"abc", b"", &big]);
        let z = zstd_cli(&plain);
        assert_eq!(z[..4], ZSTD_MAGIC);
        let got = all(Zstd::new(Cursor::new(z))).unwrap();
        assert_eq!(got, vec![b"abc".to_vec(), vec![], big]);
    }

    // RFC 8878 3.1: a stream may hold several frames, and skippable ones.
    #[test]
    fn several_frames_and_a_skippable_one() {
        let mut z = zstd_cli(&delimited(&[b"one"]));
        z.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        z.extend(zstd_cli(&delimited(&[b"two"])));
        let got = all(Zstd::new(Cursor::new(z))).unwrap();
        assert_eq!(got, vec![b"one".to_vec(), b"two".to_vec()]);
    }

    #[test]
    fn a_cut_stream_is_truncated_not_corrupt() {
        let plain = delimited(&[&[1u8; 5000], &[2u8; 5000]]);
        let z = zstd_cli(&plain);
        let cut = &z[..z.len() - 3];
        assert!(matches!(
            all(Zstd::new(Cursor::new(cut.to_vec()))),
            Err(RecordError::Truncated)
        ));
    }

    /// What the reference decoder recovers from `z`: `zstd -dc` writes
    /// every byte it decoded before it fails at a cut.
    pub(crate) fn zstd_cli_recovers(z: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut child = Command::new("zstd")
            .args(["-q", "-d", "-c"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("zstd CLI (/usr/bin/zstd) for the test");
        let mut stdin = child.stdin.take().unwrap();
        let z = z.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&z));
        let out = child.wait_with_output().unwrap();
        let _ = writer.join().unwrap();
        out.stdout
    }

    /// `plain` as one zstd frame of raw blocks of `block` bytes each, with
    /// a 2 MiB window and no content size: the shape of a log whose writer
    /// flushes often (Buck2's, Bazel's), each flush ending a block
    /// (RFC 8878 3.1.1: `Frame_Header_Descriptor` 0, `Window_Descriptor`
    /// 0x58 = 2^21 bytes; block header: `Last_Block`, type 0 raw, size).
    pub(crate) fn zstd_flushed(plain: &[u8], block: usize) -> Vec<u8> {
        let mut z = ZSTD_MAGIC.to_vec();
        z.extend_from_slice(&[0x00, 0x58]);
        let chunks: Vec<&[u8]> = plain.chunks(block).collect();
        for (i, c) in chunks.iter().enumerate() {
            let last = u32::from(i + 1 == chunks.len());
            let header = last | ((c.len() as u32) << 3);
            z.extend_from_slice(&header.to_le_bytes()[..3]);
            z.extend_from_slice(c);
        }
        z
    }

    /// The complete varint-delimited records at the start of `plain`,
    /// counted naively (a second reading, not [`Records`]).
    pub(crate) fn complete_records(plain: &[u8]) -> usize {
        let (mut at, mut n) = (0usize, 0usize);
        loop {
            let (mut len, mut shift, mut i) = (0usize, 0u32, at);
            loop {
                let Some(&b) = plain.get(i) else { return n };
                len |= usize::from(b & 0x7f) << shift;
                shift += 7;
                i += 1;
                if b & 0x80 == 0 {
                    break;
                }
            }
            if plain.len() - i < len {
                return n;
            }
            at = i + len;
            n += 1;
        }
    }

    // Issue 34: the decoder held back its window until the frame's end, so
    // a stream cut anywhere gave no record at all (the whole frame is the
    // window at this size). Now every record `zstd -dc` recovers is read,
    // then the cut is said.
    #[test]
    fn a_cut_stream_gives_every_record_decoded_before_the_cut() {
        let records: Vec<Vec<u8>> = (0u32..60_000)
            .map(|i| std::format!("record {i} {}", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let z = zstd_cli(&delimited(&refs));
        for pct in [25, 50, 75, 90, 99] {
            let cut = &z[..z.len() * pct / 100];
            let want = complete_records(&zstd_cli_recovers(cut));
            assert!(want > 0, "{pct} %: the reference recovers nothing");
            let mut rs = Records::new(Zstd::new(Cursor::new(cut.to_vec())));
            let mut buf = Vec::new();
            let mut got = 0;
            let end = loop {
                match rs.next_into(&mut buf) {
                    Ok(true) => {
                        assert_eq!(buf, records[got], "{pct} %: record {got}");
                        got += 1;
                    }
                    other => break other,
                }
            };
            assert!(
                matches!(end, Err(RecordError::Truncated)),
                "{pct} %: {end:?}"
            );
            assert_eq!(got, want, "{pct} %");
        }
    }

    #[test]
    fn garbage_is_not_zstd() {
        let e = all(Zstd::new(Cursor::new(b"hello world".to_vec()))).unwrap_err();
        match e {
            RecordError::Zstd(f) => assert!(f.what.contains("not a zstd stream"), "{}", f.what),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lengths_cut_bad_and_too_long() {
        // A record cut in its body, and in its length.
        assert!(matches!(
            all(Cursor::new(vec![5u8, 1, 2])),
            Err(RecordError::Truncated)
        ));
        assert!(matches!(
            all(Cursor::new(vec![0x80u8])),
            Err(RecordError::Truncated)
        ));
        assert!(matches!(
            all(Cursor::new(vec![0xffu8; 11])),
            Err(RecordError::BadLength)
        ));
        let mut huge = Vec::new();
        prost::encoding::encode_varint(MAX_RECORD + 1, &mut huge);
        assert!(matches!(
            all(Cursor::new(huge)),
            Err(RecordError::TooLong(n)) if n == MAX_RECORD + 1
        ));
        assert_eq!(all(Cursor::new(Vec::new())).unwrap(), Vec::<Vec<u8>>::new());
    }
}
