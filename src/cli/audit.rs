//! `credencial audit list`: the audit trail at the command line, through
//! [`StaffService::trail`], with the filters and page size of the panel's
//! `/admin/auditoria/`.

use std::sync::Arc;

use clap::Subcommand;
use credencial_application::StaffService;
use credencial_domain::admin::{AuditEntry, AuditFilter};
use credencial_domain::local_time::brasilia_time;

use super::storage;
use crate::settings::Settings;

/// `credencial audit …`
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// List the audit trail, newest first, 50 entries a page (as
    /// `/admin/auditoria/`); names are matched exactly, ignoring case.
    List {
        /// Only the entries of this actor (staff username, OS user or
        /// client id).
        #[arg(long)]
        actor: Option<String>,
        /// Only the entries about this target (username or client id).
        #[arg(long)]
        target: Option<String>,
        /// Only the entries older than this one (its id, as the previous
        /// page's last line gives it): the next page.
        #[arg(long)]
        before: Option<i64>,
    },
}

/// Runs an `audit` command.
pub(super) async fn run(settings: &Settings, command: AuditCommand) -> anyhow::Result<()> {
    match command {
        AuditCommand::List { actor, target, before } => {
            let storage = storage(settings).await?;
            let staff = StaffService::new(Arc::clone(&storage.users), Arc::clone(&storage.audit));
            let filter = AuditFilter { actor: non_empty(actor), target: non_empty(target) };
            let listed = staff.trail(&filter, before).await?;
            println!(
                "{:<16}  {:<18} {:<20} {:<38} {:<24} {:<36} CHANGES",
                "WHEN (BRT)", "ACTOR KIND", "ACTOR", "ACTION", "TARGET", "REQUEST ID"
            );
            for entry in &listed.entries {
                println!("{}", row(entry));
            }
            println!("{}", super::pager_line(listed.tally, "entries", listed.next.map(|id| format!("--before {id}"))));
            Ok(())
        }
    }
}

/// A filter value, trimmed; `None` when blank (as the panel's empty field).
fn non_empty(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// One entry as a line of the table: the same columns as the panel's page,
/// the changed fields as `field=value` pairs.
fn row(e: &AuditEntry) -> String {
    let target = if e.target.is_empty() { "-" } else { e.target.as_str() };
    let request_id = e.request_id.as_deref().unwrap_or("-");
    let changes: Vec<String> = e.changes.iter().map(|(field, value)| format!("{field}={value}")).collect();
    let changes = if changes.is_empty() { "-".to_owned() } else { changes.join(" ") };
    format!(
        "{:<16}  {:<18} {:<20} {:<38} {:<24} {:<36} {changes}",
        brasilia_time(e.at),
        e.actor_kind_label(),
        e.actor,
        e.action_label(),
        target,
        request_id
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_shows_the_time_in_brasilia_and_the_changes_as_pairs() {
        let entry = AuditEntry {
            id: 1,
            at: 1_764_072_000,
            actor_kind: "cli".into(),
            actor: "root".into(),
            action: "user.staff".into(),
            target_kind: "user".into(),
            target: "bruno".into(),
            changes: vec![("is_staff".into(), "true".into()), ("name".into(), "Bruno".into())],
            request_id: None,
        };
        let line = row(&entry);
        assert!(line.starts_with("25/11/2025 09:00  linha de comando"), "{line}");
        assert!(line.contains("Acesso à administração alterado"), "{line}");
        assert!(line.ends_with("is_staff=true name=Bruno"), "{line}");
    }

    #[test]
    fn the_pager_line_counts_and_names_the_next_page() {
        use credencial_domain::admin::Tally;
        assert_eq!(super::super::pager_line(Tally::Exactly(2), "entries", None), "2 entries; no more pages");
        assert_eq!(
            super::super::pager_line(Tally::MoreThan(1000), "users", Some("--after bia".into())),
            "more than 1000 users; next page: --after bia"
        );
    }

    #[test]
    fn blank_filters_select_everything() {
        assert_eq!(non_empty(Some("  ".into())), None);
        assert_eq!(non_empty(Some(" ana ".into())), Some("ana".into()));
    }
}
