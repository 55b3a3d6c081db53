//! Loading an ELF32 little-endian RISC-V executable into a [`Program`]: its loadable segments,
//! entry point, the size of its code, and its symbols.
//!
//! Parsing is done by the `elf` crate; this module adds the checks that make a bad file a
//! one-line error instead of a wrong run: class, byte order, machine, type, segments that run
//! past the end of the file, or that overlap.

use std::collections::BTreeMap;

use elf::abi::{
    EM_RISCV, ET_EXEC, PT_LOAD, SHF_ALLOC, SHF_EXECINSTR, SHN_UNDEF, SHT_NOBITS, STT_FUNC,
};
use elf::endian::LittleEndian;
use elf::ElfBytes;

use crate::error::SimError;

/// One loadable segment: `data` goes to `addr`, and the rest up to `mem_size` is zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub addr: u32,
    pub data: Vec<u8>,
    pub mem_size: u32,
}

/// An executable ready to be placed in memory.
#[derive(Debug, Clone, Default)]
pub struct Program {
    pub entry: u32,
    pub segments: Vec<Segment>,
    /// Bytes in executable sections (the `.text` size a user compares between builds).
    pub text_size: u32,
    /// Named symbols and their values, for locating variables such as the timer interval.
    pub symbols: BTreeMap<String, u32>,
    /// Function symbols with a size (name, size in bytes), for the code size of chosen
    /// functions (a program's own code beside the C runtime linked with it).
    pub functions: BTreeMap<String, u32>,
    /// The ELF header says the code may contain compressed instructions (EF_RISCV_RVC).
    pub rvc: bool,
    /// The sections that are not loaded but have bytes in the file (symbol and string
    /// tables, attributes, comments; not `.debug*`), at the address their header gives
    /// (mostly 0), in the order of their names: what a loader that writes every section into
    /// memory, as Ripes does, leaves outside the program's segments. Only the per-cycle
    /// front end reads them (what it fetches after a return to address 0).
    pub other_sections: Vec<Segment>,
}

impl Program {
    /// A program made of raw code at `addr` (for tests and hand-written sequences).
    pub fn from_code(addr: u32, code: &[u8]) -> Program {
        Program {
            entry: addr,
            segments: vec![Segment {
                addr,
                data: code.to_vec(),
                mem_size: code.len() as u32,
            }],
            text_size: code.len() as u32,
            symbols: BTreeMap::new(),
            functions: BTreeMap::new(),
            rvc: true,
            other_sections: Vec::new(),
        }
    }

    /// Parses an ELF file. Never panics, whatever the bytes.
    pub fn from_elf(bytes: &[u8]) -> Result<Program, SimError> {
        check_ident(bytes)?;
        let file =
            ElfBytes::<LittleEndian>::minimal_parse(bytes).map_err(|e| parse_error(&e, bytes))?;
        let hdr = &file.ehdr;
        if hdr.e_machine != EM_RISCV {
            return Err(SimError::Elf(format!(
                "machine {} is not RISC-V ({EM_RISCV})",
                hdr.e_machine
            )));
        }
        if hdr.e_type != ET_EXEC {
            return Err(SimError::Elf(format!(
                "type {} is not an executable (ET_EXEC); link the program first",
                hdr.e_type
            )));
        }
        let segments = load_segments(&file, bytes)?;
        if segments.is_empty() {
            return Err(SimError::Elf("no loadable segment".into()));
        }
        Ok(Program {
            entry: hdr.e_entry as u32,
            segments,
            text_size: text_size(&file),
            symbols: symbols(&file),
            functions: functions(&file),
            rvc: hdr.e_flags & 1 != 0,
            other_sections: other_sections(&file, bytes),
        })
    }

    /// Bytes of code in the named functions that this program defines.
    pub fn functions_size<'a>(&self, names: impl IntoIterator<Item = &'a String>) -> u32 {
        names
            .into_iter()
            .filter_map(|n| self.functions.get(n))
            .fold(0u32, |a, &b| a.saturating_add(b))
    }
}

/// The functions an ELF file (an object file too) defines, with their sizes: what a user's
/// own source contributes, to find it again in the linked program.
pub fn defined_functions(bytes: &[u8]) -> Result<BTreeMap<String, u32>, SimError> {
    check_ident(bytes)?;
    let file =
        ElfBytes::<LittleEndian>::minimal_parse(bytes).map_err(|e| parse_error(&e, bytes))?;
    Ok(functions(&file))
}

/// The ELF header's tables (offset field, entry size field, count field), for saying which
/// one a short file cuts off.
const TABLES: [(&str, usize, usize, usize); 2] = [
    ("program header table", 0x1c, 0x2a, 0x2c),
    ("section header table", 0x20, 0x2e, 0x30),
];

/// A parser error in words: a file cut short names the table it cuts off and the sizes, in
/// decimal, not the parser's hexadecimal byte range.
fn parse_error(e: &elf::ParseError, bytes: &[u8]) -> SimError {
    let len = bytes.len() as u64;
    if len < 52 {
        return SimError::Elf(format!(
            "truncated: {len} bytes, shorter than a 32-bit ELF header (52 bytes)"
        ));
    }
    let u32_at = |o: usize| {
        u64::from(u32::from_le_bytes([
            bytes[o],
            bytes[o + 1],
            bytes[o + 2],
            bytes[o + 3],
        ]))
    };
    let u16_at = |o: usize| u64::from(u16::from_le_bytes([bytes[o], bytes[o + 1]]));
    for (what, off, size, count) in TABLES {
        let start = u32_at(off);
        let end = start + u16_at(size) * u16_at(count);
        if end > len {
            return SimError::Elf(format!(
                "truncated: its {what} ends at byte {end}, the file has {len} (was it cut short \
                 while copying or building?)"
            ));
        }
    }
    SimError::Elf(match e {
        elf::ParseError::SliceReadError((_, end)) => {
            format!("truncated or damaged: a part it names ends at byte {end}, the file has {len}")
        }
        e => format!("cannot parse header: {e}"),
    })
}

fn check_ident(bytes: &[u8]) -> Result<(), SimError> {
    if bytes.len() < 16 || &bytes[0..4] != b"\x7fELF" {
        return Err(SimError::Elf("not an ELF file (no \\x7fELF magic)".into()));
    }
    match bytes[4] {
        1 => {}
        2 => {
            return Err(SimError::Elf(
                "64-bit ELF; this machine runs RV32 programs only (compile with -march=rv32... -mabi=ilp32)".into(),
            ))
        }
        c => return Err(SimError::Elf(format!("unknown ELF class {c}"))),
    }
    match bytes[5] {
        1 => Ok(()),
        2 => Err(SimError::Elf(
            "big-endian ELF; RISC-V programs are little-endian".into(),
        )),
        e => Err(SimError::Elf(format!("unknown ELF byte order {e}"))),
    }
}

fn load_segments(
    file: &ElfBytes<'_, LittleEndian>,
    bytes: &[u8],
) -> Result<Vec<Segment>, SimError> {
    let Some(table) = file.segments() else {
        return Err(SimError::Elf("no program header table".into()));
    };
    let mut segments = Vec::new();
    for (i, ph) in table.iter().enumerate() {
        if ph.p_type != PT_LOAD || ph.p_memsz == 0 {
            continue;
        }
        let end_in_file = ph.p_offset.checked_add(ph.p_filesz);
        if end_in_file.is_none_or(|end| end > bytes.len() as u64) {
            return Err(SimError::Elf(format!(
                "segment {i} is truncated: needs file bytes {}..{} but the file has {}",
                ph.p_offset,
                ph.p_offset.saturating_add(ph.p_filesz),
                bytes.len()
            )));
        }
        if ph.p_filesz > ph.p_memsz {
            return Err(SimError::Elf(format!(
                "segment {i} has more file bytes ({}) than memory bytes ({})",
                ph.p_filesz, ph.p_memsz
            )));
        }
        if ph.p_paddr.saturating_add(ph.p_memsz) > 1 << 32 {
            return Err(SimError::Elf(format!(
                "segment {i} at 0x{:x} (size {}) runs past the 32-bit address space",
                ph.p_paddr, ph.p_memsz
            )));
        }
        let start = ph.p_offset as usize;
        segments.push(Segment {
            addr: ph.p_paddr as u32,
            data: bytes[start..start + ph.p_filesz as usize].to_vec(),
            mem_size: ph.p_memsz as u32,
        });
    }
    segments.sort_by_key(|s| s.addr);
    for pair in segments.windows(2) {
        let end = pair[0].addr as u64 + pair[0].mem_size as u64;
        if end > pair[1].addr as u64 {
            return Err(SimError::Elf(format!(
                "segments overlap: 0x{:08x}..0x{end:08x} and one at 0x{:08x}",
                pair[0].addr, pair[1].addr
            )));
        }
    }
    Ok(segments)
}

/// Bytes of other sections kept at most (a symbol table at address 0 is what matters).
const OTHER_SECTIONS_CAP: usize = 1 << 20;

fn other_sections(file: &ElfBytes<'_, LittleEndian>, bytes: &[u8]) -> Vec<Segment> {
    let Ok((Some(shdrs), Some(names))) = file.section_headers_with_strtab() else {
        return Vec::new();
    };
    let mut out: Vec<(String, Segment)> = Vec::new();
    let mut kept = 0usize;
    for sh in shdrs.iter() {
        let name = names.get(sh.sh_name as usize).unwrap_or("");
        if sh.sh_flags & SHF_ALLOC as u64 != 0
            || sh.sh_type == SHT_NOBITS
            || sh.sh_size == 0
            || name.starts_with(".debug")
        {
            continue;
        }
        let start = sh.sh_offset as usize;
        let Some(end) = start.checked_add(sh.sh_size as usize) else {
            continue;
        };
        if end > bytes.len() || kept + (end - start) > OTHER_SECTIONS_CAP {
            continue;
        }
        kept += end - start;
        out.push((
            name.to_string(),
            Segment {
                addr: sh.sh_addr as u32,
                data: bytes[start..end].to_vec(),
                mem_size: (end - start) as u32,
            },
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, s)| s).collect()
}

fn text_size(file: &ElfBytes<'_, LittleEndian>) -> u32 {
    let Some(shdrs) = file.section_headers() else {
        return 0;
    };
    shdrs
        .iter()
        .filter(|s| s.sh_flags & SHF_EXECINSTR as u64 != 0)
        .map(|s| s.sh_size)
        .fold(0u64, u64::saturating_add)
        .min(u32::MAX as u64) as u32
}

fn symbols(file: &ElfBytes<'_, LittleEndian>) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    if let Ok(Some((table, strings))) = file.symbol_table() {
        for sym in table.iter() {
            if let Ok(name) = strings.get(sym.st_name as usize) {
                if !name.is_empty() {
                    out.insert(name.to_string(), sym.st_value as u32);
                }
            }
        }
    }
    out
}

fn functions(file: &ElfBytes<'_, LittleEndian>) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    if let Ok(Some((table, strings))) = file.symbol_table() {
        for sym in table.iter() {
            if sym.st_symtype() != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_size == 0 {
                continue;
            }
            if let Ok(name) = strings.get(sym.st_name as usize) {
                if !name.is_empty() {
                    out.insert(name.to_string(), sym.st_size.min(u32::MAX as u64) as u32);
                }
            }
        }
    }
    out
}
