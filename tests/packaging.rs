//! The packaging files say what the code does: `credencial.toml.example`
//! names every setting of `Settings` and nothing else, in the form the
//! loader accepts; the systemd unit and the Dockerfile keep their sandboxing,
//! their non-root user, their health check and `credencial serve`.

use std::collections::BTreeSet;
use std::path::Path;

use credencial::Settings;

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The field names of `Settings` (read from its `Deserialize` impl by the
/// loader's own introspection).
fn settings_fields() -> BTreeSet<&'static str> {
    let fields = credencial::settings::setting_names();
    assert!(fields.len() > 40, "Settings has more fields than {fields:?}");
    fields.iter().copied().collect()
}

// ---- credencial.toml.example ----

/// A setting line of the example, `# key = value`.
fn setting_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("# ")?;
    let (key, value) = rest.split_once(" = ")?;
    let is_key = !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    is_key.then_some((key, value))
}

/// The example's keys in order, each with the comment block above it.
fn example_settings(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut comment = String::new();
    for line in text.lines() {
        if let Some((key, _)) = setting_line(line) {
            out.push((key.to_owned(), comment.clone()));
            comment.clear();
        } else if let Some(prose) = line.strip_prefix('#') {
            comment.push_str(prose);
            comment.push('\n');
        } else {
            comment.clear();
        }
    }
    out
}

#[test]
fn the_settings_example_names_every_setting_once_with_a_default() {
    let fields = settings_fields();
    let example = example_settings(&read("credencial.toml.example"));
    let mut seen = BTreeSet::new();
    for (key, comment) in &example {
        assert!(seen.insert(key.as_str()), "{key} is in the example twice");
        assert!(comment.contains("Default:"), "{key}: its comment does not give the default:\n{comment}");
        assert!(fields.contains(key.as_str()), "the example names {key}, which Settings does not have");
    }
    let missing: Vec<_> = fields.iter().filter(|f| !seen.contains(*f)).collect();
    assert!(missing.is_empty(), "settings missing from credencial.toml.example: {missing:?}");
}

#[test]
fn the_settings_example_loads_with_every_line_uncommented() {
    let text = read("credencial.toml.example");
    let uncommented: String =
        text.lines().filter(|line| setting_line(line).is_some()).map(|line| format!("{}\n", &line[2..])).collect();
    let dir = std::env::temp_dir().join(format!("credencial-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("credencial.toml");
    std::fs::write(&file, &uncommented).expect("write");
    // Through the real loader, the only problems left are the files an
    // operator provides (keys, CA bundle) that this machine lacks; without
    // them, every name and every value loads.
    let loaded = Settings::load(Some(&file)).err().map(|e| e.to_string());
    for problem in loaded.iter().flat_map(|e| e.lines().map(str::to_owned).collect::<Vec<_>>()) {
        assert!(problem.contains("/etc/credencial/"), "the example has a problem besides missing files: {problem}");
    }
    let without_files: String =
        uncommented.lines().filter(|l| !l.contains("/etc/credencial/")).map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, &without_files).expect("write");
    let parsed = Settings::load(Some(&file));
    let _ = std::fs::remove_dir_all(&dir);
    let settings = parsed.unwrap_or_else(|e| panic!("the uncommented example does not load: {e}\n{without_files}"));
    // The values reached the settings (not the defaults).
    assert_eq!(settings.server.workers, Some(4));
    assert_eq!(settings.server.client_address_header.as_deref(), Some("X-Forwarded-For"));
    assert_eq!(settings.registries.upstream_endpoints, ["/api/rh/eu/"]);
    assert_eq!(settings.client.scopes, ["dados_publicos", "cpf", "email"]);
}

#[test]
fn the_introspected_fields_are_the_ones_the_loader_knows() {
    // An unknown key is refused by the loader (deny_unknown_fields), and a
    // key the introspection reports is accepted: the two agree.
    let dir = std::env::temp_dir().join(format!("credencial-fields-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("credencial.toml");
    std::fs::write(&file, "bind = \"127.0.0.1:8000\"\nbnid = \"127.0.0.1:8000\"\n").expect("write");
    let refused = Settings::load(Some(&file)).err().map(|e| e.to_string());
    let _ = std::fs::remove_dir_all(&dir);
    let refused = refused.expect("an unknown key is refused");
    assert!(refused.contains("bnid"), "{refused}");
    assert!(settings_fields().contains("bind") && settings_fields().contains("database_url"));
}

// ---- the defaults the code, the example and the documentation state ----

/// The code's default of every setting (`null`: unset, or nothing to state).
fn code_defaults() -> Vec<(&'static str, serde_json::Value)> {
    let values = credencial::settings::default_values();
    settings_fields()
        .into_iter()
        .map(|key| {
            let value = match key {
                "database_url" => serde_json::Value::from(credencial::settings::DEFAULT_DATABASE_URL),
                _ => values.get(key).cloned().unwrap_or(serde_json::Value::Null),
            };
            (key, value)
        })
        .collect()
}

/// Whether a default states nothing (unset, or an empty list).
fn states_nothing(value: &serde_json::Value) -> bool {
    value.is_null() || value.as_array().is_some_and(Vec::is_empty)
}

/// A default as the example writes it: a TOML value (a string holding
/// double quotes as a literal string).
fn as_toml(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) if s.contains('"') => format!("'{s}'"),
        serde_json::Value::Array(items) => {
            format!("[{}]", items.iter().map(as_toml).collect::<Vec<_>>().join(", "))
        }
        other => other.to_string(),
    }
}

/// A default as the documentation's table writes it: the bare text, a
/// list comma-separated (as in the environment).
fn as_doc_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items.iter().map(as_doc_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

#[test]
fn the_example_states_the_defaults_of_the_code() {
    let text = read("credencial.toml.example");
    let lines: std::collections::BTreeMap<&str, &str> = text.lines().filter_map(setting_line).collect();
    let comments: std::collections::BTreeMap<String, String> = example_settings(&text).into_iter().collect();
    for (key, default) in code_defaults() {
        let comment = comments[key].replace('\n', " ");
        let stated = comment.split("Default:").nth(1).map(str::trim).unwrap_or_default();
        if states_nothing(&default) {
            assert!(
                stated.starts_with("unset") || stated.starts_with("none"),
                "{key}: the code has no default, the example says \"Default: {stated}\""
            );
        } else {
            let expected = as_toml(&default);
            assert_eq!(lines[key], expected, "{key}: the example's line is not the code's default");
            assert!(
                stated.starts_with(&expected),
                "{key}: the code's default is {expected}, the example says {stated}"
            );
        }
    }
}

/// The rows of every `| setting | default | … |` table of
/// docs/configuration.md (the full list under "Every setting", and the
/// topic tables naming `SERVICE_…` variables): the keys of a row and its
/// default cell.
fn documented_defaults(text: &str) -> Vec<(Vec<String>, String)> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("| setting | default |") {
            in_table = true;
        } else if !line.starts_with('|') {
            in_table = false;
        } else if in_table && line.starts_with("| `") {
            let cells: Vec<&str> = line.split(" | ").collect();
            let key = |k: &str| k.trim_matches('`').trim_start_matches("SERVICE_").to_lowercase();
            rows.push((cells[0].trim_start_matches("| ").split(", ").map(key).collect(), cells[1].trim().to_owned()));
        }
    }
    rows
}

/// The backticked values of a cell, in order.
fn backticked(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

#[test]
fn the_configuration_guide_states_the_defaults_of_the_code() {
    let rows = documented_defaults(&read("docs/configuration.md"));
    let defaults: std::collections::BTreeMap<_, _> = code_defaults().into_iter().collect();
    let mut seen = BTreeSet::new();
    for (keys, cell) in rows {
        let values = backticked(&cell);
        for (index, key) in keys.iter().enumerate() {
            let Some(default) = defaults.get(key.as_str()) else {
                panic!("docs/configuration.md lists {key}, which Settings does not have");
            };
            seen.insert(key.clone());
            if states_nothing(default) {
                assert!(cell.starts_with('—'), "{key}: the code has no default, the guide says {cell}");
                continue;
            }
            let stated = if values.len() == keys.len() { values[index] } else { values.first().copied().unwrap_or("") };
            assert_eq!(stated, as_doc_text(default), "{key}: the guide's default is not the code's ({cell})");
        }
    }
    let missing: Vec<_> = defaults.keys().filter(|k| !seen.contains(**k)).collect();
    assert!(missing.is_empty(), "settings missing from the guide's table: {missing:?}");
}

// ---- deploy/credencial.service ----

/// The `Key=value` lines of one `[Section]` of a systemd unit.
fn unit_section<'a>(unit: &'a str, section: &str) -> Vec<(&'a str, &'a str)> {
    let header = format!("[{section}]");
    unit.lines()
        .map(str::trim)
        .skip_while(|l| *l != header)
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect()
}

#[test]
fn the_systemd_unit_runs_serve_sandboxed() {
    let unit = read("deploy/credencial.service");
    let service = unit_section(&unit, "Service");
    let value = |key: &str| service.iter().filter(|(k, _)| *k == key).map(|(_, v)| *v).collect::<Vec<_>>();
    let exec = value("ExecStart");
    assert_eq!(exec.len(), 1, "one ExecStart: {exec:?}");
    let argv: Vec<&str> = exec[0].split_whitespace().collect();
    assert!(argv[0].starts_with('/') && argv[0].ends_with("/credencial"), "{argv:?}");
    assert_eq!(argv.get(1), Some(&"serve"), "{argv:?}");
    assert!(value("ExecStartPre").is_empty(), "migrate is the operator's explicit step, not the unit's");
    for (key, expected) in [
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("PrivateUsers", "yes"),
        ("NoNewPrivileges", "yes"),
        ("CapabilityBoundingSet", ""),
        ("SystemCallFilter", "@system-service"),
        ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
        ("RestrictNamespaces", "yes"),
        ("MemoryDenyWriteExecute", "yes"),
        ("LockPersonality", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectControlGroups", "yes"),
        ("UMask", "0077"),
    ] {
        assert_eq!(value(key).first(), Some(&expected), "{key}");
    }
    let user = value("DynamicUser") == ["yes"] || value("User").iter().any(|u| *u != "root");
    assert!(user, "a dynamic or dedicated non-root user");
    assert!(value("EnvironmentFile").iter().any(|f| f.contains("/etc/credencial/")), "settings from /etc/credencial");
    assert_eq!(value("KillSignal"), ["SIGTERM"], "graceful shutdown on SIGTERM");
    // The default database (sqlite://credencial.db, relative to the working
    // directory) lands in the one writable, private state directory.
    assert_eq!(value("StateDirectory"), ["credencial"]);
    assert_eq!(value("StateDirectoryMode"), ["0700"]);
    assert_eq!(value("WorkingDirectory"), ["%S/credencial"]);
}

// ---- Dockerfile ----

#[test]
fn the_dockerfile_runs_serve_as_a_non_root_user_with_a_healthcheck() {
    // One logical line per instruction: continuation lines (`\` at the end) joined.
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in read("Dockerfile").lines().map(str::trim) {
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                logical.push(std::mem::take(&mut current));
            }
        }
    }
    let instructions: Vec<(String, &str)> = logical
        .iter()
        .filter_map(|l| l.split_once(char::is_whitespace))
        .map(|(i, rest)| (i.to_ascii_uppercase(), rest.trim()))
        .collect();
    let last_stage = instructions.iter().rposition(|(i, _)| i == "FROM").expect("a FROM");
    assert!(instructions[..last_stage].iter().any(|(i, _)| i == "FROM"), "multi-stage: a builder, then the runtime");
    let runtime = &instructions[last_stage..];
    let all = |name: &str| runtime.iter().filter(|(i, _)| i == name).map(|(_, r)| *r).collect::<Vec<_>>();
    let user = all("USER");
    let user = user.last().expect("a USER in the runtime stage");
    assert!(!matches!(*user, "root" | "0" | "0:0"), "runs as {user}");
    let entrypoint = all("ENTRYPOINT").last().copied().unwrap_or_default().to_owned();
    let cmd = all("CMD").last().copied().unwrap_or_default().to_owned();
    assert!(entrypoint.contains("credencial"), "{entrypoint}");
    assert!(format!("{entrypoint} {cmd}").contains("\"serve\""), "serve: {entrypoint} {cmd}");
    let health = all("HEALTHCHECK").last().copied().unwrap_or_default().to_owned();
    assert!(health.contains("CMD") && health.contains("/healthz"), "{health}");
}
