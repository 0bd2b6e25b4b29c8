//! [`credencial_ports::MailStore`]: the outbox hands each due mail to one
//! sender at a time, retries and gives up as told, lists and retries what
//! failed, and purges in bounded batches; a link is issued with its mail,
//! supersedes the older one, and is taken once.

use std::collections::BTreeSet;

use credencial_domain::mail::{LinkPurpose, LinkState, MailKind, OutgoingMail};
use credencial_domain::session::SessionToken;
use credencial_domain::Redacted;
use credencial_ports::NewLink;
use credencial_storage_contract::{contract, Backend};

use crate::race::at_once;

contract!(
    a_mail_comes_back_whole_once_due_and_not_while_claimed,
    two_senders_claiming_at_once_get_each_mail_once,
    a_failed_try_waits_for_its_retry_and_the_last_one_is_shown_to_staff,
    staff_retry_puts_a_failed_mail_back_and_only_a_failed_one,
    the_purge_deletes_old_sent_mail_and_expired_links_in_batches,
    a_link_is_issued_with_its_mail_supersedes_the_older_and_is_taken_once,
    a_link_of_a_deleted_account_is_gone,
);

fn mail(to: &str, kind: MailKind) -> OutgoingMail {
    OutgoingMail {
        to: Redacted(to.into()),
        subject: format!("Assunto para {to}"),
        text: Redacted(format!("Texto com acentuação para {to}")),
        html: Redacted(format!("<p>HTML para {to}</p>")),
        kind,
    }
}

fn link(user: credencial_domain::UserId, expires_at: i64) -> (SessionToken, NewLink) {
    let token = SessionToken::generate();
    let state = LinkState { purpose: LinkPurpose::PasswordReset, stamp: "stamp-1".into(), expires_at };
    (token.clone(), NewLink { token_hash: token.hash(), user, state })
}

async fn a_mail_comes_back_whole_once_due_and_not_while_claimed<B: Backend>() {
    let b = B::fresh().await;
    let store = b.mail();
    let written = mail("ana@example.org", MailKind::PasswordReset);
    let id = store.enqueue(&written, 100).await.expect("written");
    assert!(store.claim(99, 500, 10).await.expect("claimed").is_empty(), "not due before it was written");
    assert_eq!(store.waiting().await.expect("counted"), 1);
    let claimed = store.claim(100, 500, 10).await.expect("claimed");
    assert_eq!(claimed.len(), 1);
    let c = &claimed[0];
    assert_eq!((c.id, &c.mail, c.attempts, c.created_at), (id, &written, 0, 100), "every field back");
    assert!(store.claim(499, 999, 10).await.expect("claimed").is_empty(), "held while the lease runs");
    store.postpone(id, 300).await.expect("given back");
    let again = store.claim(300, 999, 10).await.expect("claimed");
    assert_eq!((again.len(), again[0].attempts), (1, 0), "given back early, no try counted");
    assert!(store.claim(998, 999, 10).await.expect("claimed").is_empty(), "held while the new lease runs");
    assert_eq!(store.claim(999, 1_200, 10).await.expect("claimed").len(), 1, "a lapsed lease is claimed again");
    store.mark_sent(id, 1_010).await.expect("sent");
    store.postpone(id, 2_000).await.expect("no-op");
    assert!(store.claim(10_000, 20_000, 10).await.expect("claimed").is_empty(), "a sent mail never comes back");
    assert_eq!(store.waiting().await.expect("counted"), 0);
}

async fn two_senders_claiming_at_once_get_each_mail_once<B: Backend>() {
    const MAILS: usize = 40;
    let b = B::fresh().await;
    let store = b.mail();
    for i in 0..MAILS {
        store.enqueue(&mail(&format!("p{i}@example.org"), MailKind::PasswordReset), 100).await.expect("written");
    }
    // Several rounds of two senders claiming small batches together.
    let mut seen = Vec::new();
    for _ in 0..MAILS {
        let batches = at_once(2, |_| {
            let store = store.clone();
            async move { store.claim(200, 10_000, 3).await.expect("claimed") }
        })
        .await;
        let round: Vec<i64> = batches.into_iter().flatten().map(|m| m.id).collect();
        if round.is_empty() {
            break;
        }
        seen.extend(round);
    }
    let distinct: BTreeSet<i64> = seen.iter().copied().collect();
    assert_eq!(distinct.len(), seen.len(), "no mail claimed twice: {seen:?}");
    assert_eq!(distinct.len(), MAILS, "every mail claimed");
}

async fn a_failed_try_waits_for_its_retry_and_the_last_one_is_shown_to_staff<B: Backend>() {
    let b = B::fresh().await;
    let store = b.mail();
    let id = store.enqueue(&mail("ana@example.org", MailKind::PasswordResetDone), 100).await.expect("written");
    store.claim(100, 1_000, 10).await.expect("claimed");
    store.mark_failed(id, "connection refused", Some(160), 101).await.expect("recorded");
    assert!(store.claim(159, 1_000, 10).await.expect("claimed").is_empty(), "waits for its retry");
    let again = store.claim(160, 1_000, 10).await.expect("claimed");
    assert_eq!(again[0].attempts, 1, "the failed try is counted");
    assert!(store.failed(None, 10).await.expect("listed").is_empty(), "not failed while tries are left");
    store.mark_failed(id, "550 mailbox unavailable", None, 170).await.expect("recorded");
    assert!(store.claim(1_000_000, 2_000_000, 10).await.expect("claimed").is_empty(), "given up: never claimed");
    assert_eq!(store.waiting().await.expect("counted"), 0);
    let failed = store.failed(None, 10).await.expect("listed");
    assert_eq!(failed.len(), 1);
    let f = &failed[0];
    assert_eq!((f.id, f.to.as_str(), f.kind), (id, "ana@example.org", MailKind::PasswordResetDone));
    assert_eq!((f.created_at, f.failed_at, f.attempts), (100, 170, 2));
    assert_eq!(f.last_error, "550 mailbox unavailable");
}

async fn staff_retry_puts_a_failed_mail_back_and_only_a_failed_one<B: Backend>() {
    let b = B::fresh().await;
    let store = b.mail();
    let mut failed_ids = Vec::new();
    for i in 0..5 {
        let id = store.enqueue(&mail(&format!("p{i}@example.org"), MailKind::PasswordReset), 100).await.expect("w");
        store.claim(100, 1_000, 10).await.expect("claimed");
        store.mark_failed(id, "down", None, 100 + i).await.expect("given up");
        failed_ids.push(id);
    }
    let pending = store.enqueue(&mail("due@example.org", MailKind::PasswordReset), 100).await.expect("written");
    // Paged newest first by key.
    let first = store.failed(None, 2).await.expect("listed");
    let second = store.failed(Some(first[1].id), 2).await.expect("listed");
    let third = store.failed(Some(second[1].id), 2).await.expect("listed");
    let listed: Vec<i64> = first.iter().chain(&second).chain(&third).map(|f| f.id).collect();
    let mut newest_first = failed_ids.clone();
    newest_first.reverse();
    assert_eq!(listed, newest_first);
    assert!(!store.retry(pending, 300).await.expect("retried"), "a mail still queued is not a failed one");
    assert!(!store.retry(999_999, 300).await.expect("retried"), "an unknown row");
    assert!(store.retry(failed_ids[0], 300).await.expect("retried"));
    assert!(!store.retry(failed_ids[0], 300).await.expect("retried"), "once");
    let claimed = store.claim(300, 1_000, 10).await.expect("claimed");
    let ids: BTreeSet<i64> = claimed.iter().map(|m| m.id).collect();
    assert_eq!(ids, BTreeSet::from([failed_ids[0], pending]));
    let retried = claimed.iter().find(|m| m.id == failed_ids[0]).expect("retried mail");
    assert_eq!(retried.attempts, 0, "its tries count from zero again");
    assert_eq!(store.failed(None, 10).await.expect("listed").len(), 4);
}

async fn the_purge_deletes_old_sent_mail_and_expired_links_in_batches<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.mail();
    for at in [10, 20, 30, 1_000] {
        let id = store.enqueue(&mail("ana@example.org", MailKind::PasswordReset), at).await.expect("written");
        store.claim(at, at + 1, 10).await.expect("claimed");
        store.mark_sent(id, at).await.expect("sent");
    }
    let waiting = store.enqueue(&mail("ana@example.org", MailKind::PasswordReset), 5).await.expect("written");
    let (_, old) = link(ana, 50);
    store.issue_link(&old, &mail("ana@example.org", MailKind::PasswordReset), 5, 0).await.expect("issued");
    let bruno = b.create_user("bruno").await;
    let (live_token, live) = link(bruno, 5_000);
    store.issue_link(&live, &mail("bruno@example.org", MailKind::PasswordReset), 5, 0).await.expect("issued");
    assert_eq!(store.purge(500, 100, 2).await.expect("purged"), 3, "two sent mails and one expired link");
    assert_eq!(store.purge(500, 100, 2).await.expect("purged"), 1);
    assert_eq!(store.purge(500, 100, 2).await.expect("purged"), 0);
    assert!(store.find_link(&old.token_hash).await.expect("read").is_none(), "the expired link went");
    assert!(store.find_link(&live_token.hash()).await.expect("read").is_some(), "a live link stays");
    let unsent = store.claim(10_000, 20_000, 10).await.expect("claimed");
    assert_eq!(unsent.len(), 3, "mail not yet sent is never purged");
    assert!(unsent.iter().any(|m| m.id == waiting));
    assert_eq!(b.count("SELECT count(*) FROM mail_outbox WHERE sent_at = 1000").await, 1, "recent sent mail stays");
}

async fn a_link_is_issued_with_its_mail_supersedes_the_older_and_is_taken_once<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.mail();
    let (first_token, first) = link(ana, 2_000);
    store.issue_link(&first, &mail("ana@example.org", MailKind::PasswordReset), 100, 0).await.expect("issued");
    let found = store.find_link(&first_token.hash()).await.expect("read").expect("found");
    assert_eq!((found.user, &found.state), (ana, &first.state));
    assert_eq!(store.claim(100, 500, 10).await.expect("claimed").len(), 1, "its mail was written with it");
    let (second_token, second) = link(ana, 3_000);
    let ana_mail = mail("ana@example.org", MailKind::PasswordReset);
    assert!(
        !store.issue_link(&second, &ana_mail, 150, 60).await.expect("read"),
        "a second link within the quiet time is not issued"
    );
    assert!(store.find_link(&second_token.hash()).await.expect("read").is_none());
    assert_eq!(store.claim(150, 500, 10).await.expect("claimed").len(), 0, "nor its mail written");
    assert!(store.find_link(&first_token.hash()).await.expect("read").is_some(), "the first one still works");
    assert!(store.issue_link(&second, &ana_mail, 200, 60).await.expect("issued"), "after the quiet time");
    assert!(store.find_link(&first_token.hash()).await.expect("read").is_none(), "superseded");
    assert!(store.take_link(&first_token.hash(), LinkPurpose::PasswordReset).await.expect("taken").is_none());
    let taken = store.take_link(&second_token.hash(), LinkPurpose::PasswordReset).await.expect("taken");
    assert_eq!(taken.expect("taken").user, ana);
    assert!(store.take_link(&second_token.hash(), LinkPurpose::PasswordReset).await.expect("taken").is_none(), "once");
    // Two takers at once: one gets it.
    let (third_token, third) = link(ana, 3_000);
    store.issue_link(&third, &mail("ana@example.org", MailKind::PasswordReset), 300, 0).await.expect("issued");
    let hash = third_token.hash();
    let outcomes = at_once(4, |_| {
        let store = store.clone();
        async move { store.take_link(&hash, LinkPurpose::PasswordReset).await.expect("taken").is_some() }
    })
    .await;
    assert_eq!(outcomes.iter().filter(|t| **t).count(), 1, "{outcomes:?}");
}

async fn a_link_of_a_deleted_account_is_gone<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.mail();
    let (token, issued) = link(ana, 2_000);
    store.issue_link(&issued, &mail("ana@example.org", MailKind::PasswordReset), 100, 0).await.expect("issued");
    b.execute(&format!("DELETE FROM users WHERE id = {}", ana.0)).await;
    assert!(store.find_link(&token.hash()).await.expect("read").is_none());
}
