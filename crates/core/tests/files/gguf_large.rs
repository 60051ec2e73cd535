//! A multi-gigabyte GGUF (sparse: 8 GiB long, a 262,144-token vocabulary in its metadata)
//! opens without reading its tensor data and without holding its vocabulary: the bytes
//! read stop within one read buffer of the metadata's end, and the peak of heap memory
//! allocated while reading stays far under 20 MB. The time it takes is measured by
//! `cargo bench --bench gguf`, not asserted here.
//!
//! The heap is measured on the test thread by the binary's metered allocator.

use crate::gguf_support;
use std::io::{Read, Seek, SeekFrom};

use chatplate_render::{reset_thread_peak, thread_live_bytes, thread_peak_bytes};
use gguf_support::write_large;

/// A file that counts the bytes read from it and the furthest position reached.
struct Counted {
    file: std::fs::File,
    read: u64,
    furthest: u64,
}

impl Read for Counted {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buffer)?;
        self.read += n as u64;
        let position = self.file.stream_position()?;
        self.furthest = self.furthest.max(position);
        Ok(n)
    }
}

impl Seek for Counted {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.file.seek(to)
    }
}

const GIB: u64 = 1 << 30;
const VOCABULARY: usize = 262_144;

#[test]
fn an_8_gib_gguf_opens_reading_only_its_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.gguf");
    let metadata_end = write_large(&path, VOCABULARY, 8 * GIB);
    assert!(
        metadata_end > 4_000_000,
        "a realistic vocabulary: {metadata_end} bytes"
    );

    let mut counted = Counted {
        file: std::fs::File::open(&path).unwrap(),
        read: 0,
        furthest: 0,
    };
    // The binary's allocator (MeteredAllocator, installed in main.rs) counts per thread,
    // so tests running beside this one do not count.
    let baseline = thread_live_bytes();
    reset_thread_peak();
    let found = chatplate_core::gguf::read_metadata(&mut counted, 8 * GIB).unwrap();
    let peak = thread_peak_bytes() - baseline;

    assert_eq!(found.bos_token.as_deref(), Some("<tok1>"));
    assert_eq!(found.eos_token.as_deref(), Some("<tok262143>"));
    assert!(found.chat_template.is_some());
    let buffer = 64 * 1024;
    assert!(
        counted.furthest <= metadata_end + buffer,
        "read up to byte {} of 8 GiB; the metadata ends at {metadata_end}",
        counted.furthest
    );
    // Each token is skipped once; the bos/eos lookups each re-read at most a buffer.
    assert!(
        counted.read <= metadata_end + 3 * buffer,
        "{} bytes read",
        counted.read
    );
    assert!(
        peak < 1_000_000,
        "{peak} bytes allocated at the peak (budget: 20 MB)"
    );
    eprintln!(
        "8 GiB GGUF: read {} bytes (metadata {metadata_end}), peak heap {peak} bytes",
        counted.read
    );
}
