//! `credencial export` and `credencial import`: a whole deployment as JSON
//! lines, to move it between SQLite and PostgreSQL (either way).
//!
//! The first line is a header (`{"format":"credencial-export","version":1,
//! "engine":…,"tables":{name: rows}}`), then one line per row:
//! `{"table":"users","row":{…}}`, tables in the order of
//! [`credencial_ports::TABLES`]. Values take the engine-neutral forms of
//! [`credencial_ports::transfer`]; secrets stay hashed as the database keeps
//! them. The file holds personal data: `--out` creates it with mode 0600.

use std::collections::BTreeMap;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use credencial_ports::transfer::{Dump, Row, TABLES};
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

/// Every other line.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    table: String,
    row: Row,
}

/// Writes every table of the configured database to `out` (a new file,
/// mode 0600) or standard output; returns the rows written.
pub(super) async fn export(settings: &Settings, out: Option<&Path>) -> anyhow::Result<u64> {
    let storage = storage(settings).await?;
    check_schema(&storage.database).await?;
    let Dump { tables, id_high_water } = storage.transfer.export().await?;
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        engine: format!("{:?}", storage.database.engine()).to_lowercase(),
        tables: tables.iter().map(|(table, rows)| (table.name.to_owned(), rows.len() as u64)).collect(),
        id_high_water,
    };
    let sink: Box<dyn Write> = match out {
        Some(path) => Box::new(private_file(path)?),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut sink = BufWriter::new(sink);
    serde_json::to_writer(&mut sink, &header)?;
    writeln!(sink)?;
    let mut written = 0;
    for (table, rows) in tables {
        for row in rows {
            serde_json::to_writer(&mut sink, &Line { table: table.name.to_owned(), row })?;
            writeln!(sink)?;
            written += 1;
        }
    }
    sink.flush()?;
    Ok(written)
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

/// Reads an export from `input` (a file, or standard input) and writes it
/// into the configured database, which must be migrated and empty; returns
/// the rows imported.
pub(super) async fn import(settings: &Settings, input: Option<&PathBuf>) -> anyhow::Result<u64> {
    let dump = match input {
        Some(path) => {
            let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
            parse(std::io::BufReader::new(file))?
        }
        None => parse(std::io::stdin().lock())?,
    };
    let storage = storage(settings).await?;
    check_schema(&storage.database).await?;
    let total = dump.tables.iter().map(|(_, rows)| rows.len() as u64).sum();
    match storage.transfer.import(&dump).await {
        Ok(()) => Ok(total),
        // The target's own words: it holds data.
        Err(RepositoryError::Conflict(why)) => anyhow::bail!(why),
        Err(e) => Err(anyhow::Error::new(e).context("the import was refused and nothing was written")),
    }
}

/// The tables of an export, checked: the header's format and version,
/// every table and column known, every row's column set complete, the
/// header's counts matching the rows.
fn parse(input: impl BufRead) -> anyhow::Result<Dump> {
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
    let mut rows: BTreeMap<&str, Vec<Row>> = TABLES.iter().map(|t| (t.name, Vec::new())).collect();
    for (index, line) in lines {
        let number = index + 1;
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let Line { table, row } = serde_json::from_str(&line).with_context(|| format!("line {number}: not a row"))?;
        let spec = TABLES
            .iter()
            .find(|t| t.name == table)
            .with_context(|| format!("line {number}: unknown table `{table}`"))?;
        if let Some(column) = row.keys().find(|k| !spec.columns.iter().any(|(name, _)| name == k)) {
            anyhow::bail!("line {number}: unknown column `{column}` of table `{table}`");
        }
        if let Some((missing, _)) = spec.columns.iter().find(|(name, _)| !row.contains_key(*name)) {
            anyhow::bail!("line {number}: the row of `{table}` has no column `{missing}`");
        }
        rows.entry(spec.name).or_default().push(row);
    }
    for (name, count) in &header.tables {
        let found = rows.get(name.as_str()).map_or(0, Vec::len) as u64;
        anyhow::ensure!(found == *count, "table `{name}`: the header says {count} rows, the file has {found}");
    }
    let tables = TABLES.iter().map(|t| (*t, rows.remove(t.name).unwrap_or_default())).collect();
    Ok(Dump { tables, id_high_water: header.id_high_water })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
