//! `credencial export` and `credencial import`: a whole deployment as JSON
//! lines, to move it between SQLite and PostgreSQL (either way).
//!
//! The first line is a header (`{"format":"credencial-export","version":1,
//! "engine":…,"tables":{name: rows}}`), then one line per row:
//! `{"table":"users","row":{…}}`, tables in the order of
//! [`credencial_ports::TABLES`]. Values take the engine-neutral forms of
//! [`credencial_ports::transfer`]; secrets stay hashed as the database keeps
//! them. The file holds personal data: `--out` creates it with mode 0600.
//!
//! Both run in constant memory whatever the database's size: rows are
//! streamed from one snapshot to the file line by line, and read back and
//! written line by line in one transaction (all or nothing).

use std::collections::BTreeMap;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use credencial_ports::transfer::{ExportSink, ImportSource, Row, TableSpec, TABLES};
use credencial_ports::RepositoryError;
use serde::{Deserialize, Serialize};

use super::storage;
use crate::settings::Settings;
use crate::startup::check_schema;

/// The `format` member of an export's header.
pub const FORMAT: &str = "credencial-export";
/// The version of the format this build writes and reads.
pub const VERSION: u32 = 1;

/// The first line of an export.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Header {
    format: String,
    version: u32,
    /// The engine it was exported from (`sqlite` or `postgres`), for the reader.
    engine: String,
    /// How many rows each table has in the file.
    tables: BTreeMap<String, u64>,
    /// The largest id each table's generator ever gave.
    id_high_water: BTreeMap<String, i64>,
}

/// Every other line, as read.
#[derive(Debug, Deserialize)]
struct Line {
    table: String,
    row: Row,
}

/// Every other line, as written.
#[derive(Debug, Serialize)]
struct LineOut<'a> {
    table: &'a str,
    row: &'a Row,
}

/// The export's lines, written as the rows are read: memory does not grow
/// with the database. A progress line per table goes to standard error.
struct FileSink {
    out: BufWriter<Box<dyn Write + Send>>,
    engine: String,
    table: &'static str,
    written: u64,
}

/// An export line that could not be written.
fn write_error(e: impl std::fmt::Display) -> RepositoryError {
    RepositoryError::Unexpected(format!("cannot write the export: {e}"))
}

impl ExportSink for FileSink {
    fn begin(
        &mut self,
        counts: &[(TableSpec, u64)],
        id_high_water: &BTreeMap<String, i64>,
    ) -> Result<(), RepositoryError> {
        let header = Header {
            format: FORMAT.into(),
            version: VERSION,
            engine: self.engine.clone(),
            tables: counts.iter().map(|(table, rows)| (table.name.to_owned(), *rows)).collect(),
            id_high_water: id_high_water.clone(),
        };
        serde_json::to_writer(&mut self.out, &header).map_err(write_error)?;
        writeln!(self.out).map_err(write_error)
    }

    fn table(&mut self, table: &TableSpec, rows: u64) -> Result<(), RepositoryError> {
        self.table = table.name;
        eprintln!("credencial export: {} ({rows} rows)", table.name);
        Ok(())
    }

    fn row(&mut self, row: Row) -> Result<(), RepositoryError> {
        serde_json::to_writer(&mut self.out, &LineOut { table: self.table, row: &row }).map_err(write_error)?;
        writeln!(self.out).map_err(write_error)?;
        self.written += 1;
        Ok(())
    }
}

/// Writes every table of the configured database to `out` (a new file,
/// mode 0600) or standard output, row by row as they are read; returns the
/// rows written.
pub(super) async fn export(settings: &Settings, out: Option<&Path>) -> anyhow::Result<u64> {
    let storage = storage(settings).await?;
    check_schema(&storage.database).await?;
    let target: Box<dyn Write + Send> = match out {
        Some(path) => Box::new(private_file(path)?),
        None => Box::new(std::io::stdout()),
    };
    let mut sink = FileSink {
        out: BufWriter::new(target),
        engine: format!("{:?}", storage.database.engine()).to_lowercase(),
        table: "",
        written: 0,
    };
    storage.transfer.export_to(&mut sink).await?;
    sink.out.flush()?;
    Ok(sink.written)
}

/// A new file with mode 0600; an existing one is never overwritten.
fn private_file(path: &Path) -> anyhow::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .with_context(|| format!("cannot create {} (an existing file is never overwritten)", path.display()))
}

/// Reads an export from `input` (a file, or standard input) and writes it,
/// row by row as it is read, into the configured database, which must be
/// migrated and empty; returns the rows imported. All or nothing: a line
/// that cannot be read, or a database rule a row breaks, writes nothing.
pub(super) async fn import(settings: &Settings, input: Option<&PathBuf>) -> anyhow::Result<u64> {
    let reader: Box<dyn BufRead + Send> = match input {
        Some(path) => {
            let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
            Box::new(std::io::BufReader::new(file))
        }
        None => Box::new(std::io::BufReader::new(std::io::stdin())),
    };
    // The header is checked before the database is touched.
    let mut source = FileSource::open(reader)?;
    let storage = storage(settings).await?;
    check_schema(&storage.database).await?;
    let id_high_water = source.header.id_high_water.clone();
    match storage.transfer.import_from(&mut source, &id_high_water).await {
        Ok(rows) => Ok(rows),
        Err(_) if source.failure.is_some() => {
            let why = source.failure.take().unwrap_or_else(|| anyhow::anyhow!("the export could not be read"));
            Err(why.context("the import was refused and nothing was written"))
        }
        // The target's own words: it holds data, or addresses are shared.
        Err(RepositoryError::Conflict(why)) => anyhow::bail!(why),
        Err(e) => Err(anyhow::Error::new(e).context("the import was refused and nothing was written")),
    }
}

/// An export's rows, read and checked a line at a time: every table and
/// column known, every row's column set complete, tables in the schema's
/// order, and at the end the header's counts matching the rows. A progress
/// line per table goes to standard error.
struct FileSource {
    lines: std::iter::Enumerate<std::io::Lines<Box<dyn BufRead + Send>>>,
    header: Header,
    /// The position in [`TABLES`] of the table being read.
    position: usize,
    /// Rows read per table.
    counts: BTreeMap<&'static str, u64>,
    /// Why reading stopped, when it failed (the import's error).
    failure: Option<anyhow::Error>,
}

impl FileSource {
    /// The source after its header (line 1), checked.
    fn open(input: Box<dyn BufRead + Send>) -> anyhow::Result<Self> {
        let mut lines = input.lines().enumerate();
        let header: Header = match lines.next() {
            Some((_, line)) => serde_json::from_str(&line?).context("line 1 is not an export header")?,
            None => anyhow::bail!("the input is empty: expected an export of `credencial export`"),
        };
        anyhow::ensure!(header.format == FORMAT, "line 1: not a credencial export (format `{}`)", header.format);
        anyhow::ensure!(
            header.version == VERSION,
            "line 1: export format version {} (this build reads version {VERSION})",
            header.version
        );
        Ok(Self { lines, header, position: 0, counts: BTreeMap::new(), failure: None })
    }

    /// The next row, or `None` at the end (after checking the counts).
    fn read(&mut self) -> anyhow::Result<Option<(TableSpec, Row)>> {
        for (index, line) in self.lines.by_ref() {
            let number = index + 1;
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let Line { table, row } =
                serde_json::from_str(&line).with_context(|| format!("line {number}: not a row"))?;
            let Some(position) = TABLES.iter().position(|t| t.name == table) else {
                anyhow::bail!("line {number}: unknown table `{table}`");
            };
            let spec = TABLES[position];
            if let Some(column) = row.keys().find(|k| !spec.columns.iter().any(|(name, _)| name == k)) {
                anyhow::bail!("line {number}: unknown column `{column}` of table `{table}`");
            }
            if let Some((missing, _)) = spec.columns.iter().find(|(name, _)| !row.contains_key(*name)) {
                anyhow::bail!("line {number}: the row of `{table}` has no column `{missing}`");
            }
            anyhow::ensure!(
                position >= self.position,
                "line {number}: a row of `{table}` after the rows of `{}` (an export lists tables in the schema's order)",
                TABLES[self.position].name
            );
            if position > self.position || self.counts.is_empty() {
                eprintln!("credencial import: {table}");
            }
            self.position = position;
            *self.counts.entry(spec.name).or_default() += 1;
            return Ok(Some((spec, row)));
        }
        for (name, count) in &self.header.tables {
            let found = self.counts.get(name.as_str()).copied().unwrap_or(0);
            anyhow::ensure!(found == *count, "table `{name}`: the header says {count} rows, the file has {found}");
        }
        Ok(None)
    }
}

impl ImportSource for FileSource {
    fn next_row(&mut self) -> Result<Option<(TableSpec, Row)>, RepositoryError> {
        self.read().map_err(|e| {
            let message = format!("{e:#}");
            self.failure = Some(e);
            RepositoryError::Unexpected(message)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use credencial_ports::transfer::Dump;

    /// Every row of `text`, as the import reads them.
    fn parse(text: &[u8]) -> anyhow::Result<Dump> {
        let mut source = FileSource::open(Box::new(std::io::Cursor::new(text.to_vec())))?;
        let tables = TABLES.iter().map(|t| (*t, Vec::new())).collect();
        let mut dump = Dump { tables, id_high_water: source.header.id_high_water.clone() };
        while let Some((table, row)) = source.read()? {
            let (_, rows) = dump.tables.iter_mut().find(|(t, _)| t.name == table.name).expect("a known table");
            rows.push(row);
        }
        Ok(dump)
    }

    fn header(tables: &str) -> String {
        format!(
            r#"{{"format":"credencial-export","version":1,"engine":"sqlite","tables":{tables},"id_high_water":{{}}}}"#
        )
    }

    #[test]
    fn an_export_is_read_table_by_table_in_schema_order() {
        let text = format!(
            "{}\n{}\n",
            header(r#"{"login_failures":1}"#),
            r#"{"table":"login_failures","row":{"key":"username:ana","failures":2,"window_start":1900000000}}"#
        );
        let dump = parse(text.as_bytes()).expect("parsed");
        assert_eq!(dump.tables.len(), TABLES.len());
        let (spec, rows) = dump.tables.iter().find(|(t, _)| t.name == "login_failures").expect("table");
        assert_eq!((spec.name, rows.len()), ("login_failures", 1));
        assert_eq!(rows[0]["failures"], 2);
    }

    #[test]
    fn a_wrong_header_table_column_or_count_is_refused_naming_the_line() {
        let cases = [
            (String::new(), "the input is empty"),
            (header("{}").replace("credencial-export", "other") + "\n", "not a credencial export"),
            (header("{}").replace("\"version\":1", "\"version\":9") + "\n", "version 9"),
            (format!("{}\n{}\n", header("{}"), r#"{"table":"secrets","row":{}}"#), "line 2: unknown table `secrets`"),
            (
                format!(
                    "{}\n{}\n",
                    header("{}"),
                    r#"{"table":"login_failures","row":{"key":"k","failures":1,"window_start":1,"x":1}}"#
                ),
                "line 2: unknown column `x`",
            ),
            (
                format!("{}\n{}\n", header("{}"), r#"{"table":"login_failures","row":{"key":"k"}}"#),
                "line 2: the row of `login_failures` has no column `failures`",
            ),
            (format!("{}\n", header(r#"{"users":2}"#)), "the header says 2 rows, the file has 0"),
            (format!("{}\nnot json\n", header("{}")), "line 2: not a row"),
        ];
        for (text, expected) in cases {
            let e = format!("{:#}", parse(text.as_bytes()).expect_err(expected));
            assert!(e.contains(expected), "{e}");
        }
    }

    /// A line of `table` with every column null.
    fn full_line(table: &str) -> String {
        let spec = TABLES.iter().find(|t| t.name == table).expect("a table");
        let row: Row = spec.columns.iter().map(|(name, _)| ((*name).to_owned(), serde_json::Value::Null)).collect();
        serde_json::to_string(&LineOut { table, row: &row }).expect("json")
    }

    #[test]
    fn tables_must_come_in_the_schema_s_order_parents_first() {
        let (late, early) = (TABLES[3].name, TABLES[0].name);
        let text = format!("{}\n{}\n{}\n", header("{}"), full_line(late), full_line(early));
        let e = format!("{:#}", parse(text.as_bytes()).expect_err("out of order"));
        assert!(e.contains(&format!("line 3: a row of `{early}` after the rows of `{late}`")), "{e}");
        let text = format!(
            "{}\n{}\n{}\n",
            header(&format!(r#"{{"{early}":1,"{late}":1}}"#)),
            full_line(early),
            full_line(late)
        );
        let dump = parse(text.as_bytes()).expect("in order");
        assert_eq!(dump.tables.iter().map(|(_, rows)| rows.len()).sum::<usize>(), 2);
    }
}
