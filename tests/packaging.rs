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
    // Every name and every value's type: the file deserializes as it is.
    let parsed = config::Config::builder()
        .add_source(config::File::from(file.as_path()).format(config::FileFormat::Toml))
        .build()
        .and_then(|c| c.try_deserialize::<Settings>());
    // Through the real loader, the only problems left are the files an
    // operator provides (keys, CA bundle) that this machine lacks.
    let loaded = Settings::load(Some(&file)).err().map(|e| e.to_string());
    let _ = std::fs::remove_dir_all(&dir);
    let settings = parsed.unwrap_or_else(|e| panic!("the uncommented example does not load: {e}\n{uncommented}"));
    for problem in loaded.iter().flat_map(|e| e.lines().map(str::to_owned).collect::<Vec<_>>()) {
        assert!(problem.contains("/etc/credencial/"), "the example has a problem besides missing files: {problem}");
    }
    // The values reached the settings (not the defaults).
    assert_eq!(settings.workers, Some(4));
    assert_eq!(settings.client_address_header.as_deref(), Some("X-Forwarded-For"));
    assert_eq!(settings.upstream_endpoints, ["/api/rh/eu/"]);
    assert_eq!(settings.scopes, ["dados_publicos", "cpf", "email"]);
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
