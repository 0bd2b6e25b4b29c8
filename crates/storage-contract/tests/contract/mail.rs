//! [`credencial_ports::MailStore`]: the outbox hands each due mail to one
//! sender at a time, marks outcomes only under the claim that holds the
//! mail, retries and gives up as told, lists and retries what failed, and
//! purges in bounded batches; a link is issued with its mail, within the
//! account's limits, and is taken once.

use std::collections::BTreeSet;

use credencial_domain::mail::{LinkPurpose, LinkState, MailKind, OutgoingMail};
use credencial_domain::session::SessionToken;
use credencial_domain::Redacted;
use credencial_ports::{FailedTry, NewLink};
use credencial_storage_contract::{contract, Backend};

use crate::race::at_once;

contract!(
    a_mail_comes_back_whole_once_due_and_not_while_claimed,
    an_outcome_is_marked_only_under_the_claim_that_holds_the_mail,
    two_senders_claiming_at_once_get_each_mail_once,
    a_failed_try_waits_for_its_retry_and_the_last_one_is_shown_to_staff,
    staff_retry_puts_a_failed_mail_back_and_only_one_with_a_body,
    mail_of_a_kind_this_build_does_not_know_is_left_alone,
    the_purge_deletes_old_sent_mail_and_expired_links_within_one_limit,
    links_are_issued_with_their_mail_within_the_accounts_limits_and_taken_once,
    an_accounts_links_are_forgotten_and_go_with_the_account,
    a_confirmation_link_confirms_the_address_it_was_sent_to_once,
    a_change_request_replaces_the_last_one_and_refuses_a_taken_address,
    a_confirmed_change_sets_the_address_and_keeps_the_undo_links,
    an_undo_puts_the_old_address_back_and_kills_every_link,
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
    let state =
        LinkState { purpose: LinkPurpose::PasswordReset, stamp: "stamp-1".into(), expires_at, email: String::new() };
    (token.clone(), NewLink { token_hash: token.hash(), user, state })
}

fn failure(id: i64, lease: i64, error: &str, retry_at: Option<i64>, refused: bool, now: i64) -> FailedTry {
    FailedTry { id, lease, error: error.into(), retry_at, refused, forget_body: false, now }
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
    assert_eq!((c.id, &c.mail, c.attempts, c.created_at, c.lease), (id, &written, 0, 100, 500), "every field back");
    assert!(store.claim(499, 999, 10).await.expect("claimed").is_empty(), "held while the lease runs");
    store.postpone(id, 500, 300).await.expect("given back");
    let again = store.claim(300, 999, 10).await.expect("claimed");
    assert_eq!((again.len(), again[0].attempts, again[0].lease), (1, 0, 999), "given back early, no try counted");
    assert!(store.claim(998, 1_200, 10).await.expect("claimed").is_empty(), "held while the new lease runs");
    store.mark_sent(id, 999, 1_010).await.expect("sent");
    assert!(store.claim(10_000, 20_000, 10).await.expect("claimed").is_empty(), "a sent mail never comes back");
    assert_eq!(store.waiting().await.expect("counted"), 0);
    let bodies: i64 = b
        .count(&format!("SELECT count(*) FROM mail_outbox WHERE id = {id} AND text_body = '' AND html_body = ''"))
        .await;
    assert_eq!(bodies, 1, "a delivered mail's bodies (and any link in them) are cleared");
}

async fn an_outcome_is_marked_only_under_the_claim_that_holds_the_mail<B: Backend>() {
    let b = B::fresh().await;
    let store = b.mail();
    let id = store.enqueue(&mail("ana@example.org", MailKind::SecurityNotice), 100).await.expect("written");
    store.claim(100, 200, 10).await.expect("first sender");
    // The first lease lapsed; a second sender holds the mail now.
    let second = store.claim(200, 300, 10).await.expect("second sender");
    assert_eq!(second[0].lease, 300);
    store.mark_failed(&failure(id, 200, "late", Some(250), true, 210)).await.expect("no-op");
    store.postpone(id, 200, 150).await.expect("no-op");
    store.mark_sent(id, 200, 210).await.expect("no-op");
    assert!(store.claim(299, 400, 10).await.expect("claimed").is_empty(), "the stale marks changed nothing");
    store.mark_sent(id, 300, 220).await.expect("sent by its holder");
    store.mark_failed(&failure(id, 300, "late", Some(250), true, 230)).await.expect("no-op");
    assert!(store.claim(10_000, 20_000, 10).await.expect("claimed").is_empty(), "a sent mail stays sent");
    assert!(store.failed(None, 10).await.expect("listed").is_empty());
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
    store.mark_failed(&failure(id, 1_000, "connection refused", Some(160), false, 101)).await.expect("recorded");
    assert!(store.claim(159, 1_000, 10).await.expect("claimed").is_empty(), "waits for its retry");
    let again = store.claim(160, 1_100, 10).await.expect("claimed");
    assert_eq!(again[0].attempts, 0, "a relay that could not be reached is no refusal");
    store.mark_failed(&failure(id, 1_100, "451 try later", Some(170), true, 161)).await.expect("recorded");
    let again = store.claim(170, 1_200, 10).await.expect("claimed");
    assert_eq!(again[0].attempts, 1, "a refusal is counted");
    assert!(store.failed(None, 10).await.expect("listed").is_empty(), "not failed while tries are left");
    store.mark_failed(&failure(id, 1_200, "550 mailbox unavailable", None, true, 180)).await.expect("recorded");
    assert!(store.claim(1_000_000, 2_000_000, 10).await.expect("claimed").is_empty(), "given up: never claimed");
    assert_eq!(store.waiting().await.expect("counted"), 0);
    let failed = store.failed(None, 10).await.expect("listed");
    assert_eq!(failed.len(), 1);
    let f = &failed[0];
    assert_eq!((f.id, f.to.as_str(), f.kind), (id, "ana@example.org", MailKind::PasswordResetDone));
    assert_eq!((f.created_at, f.failed_at, f.attempts), (100, 180, 2));
    assert_eq!(f.last_error, "550 mailbox unavailable");
}

async fn staff_retry_puts_a_failed_mail_back_and_only_one_with_a_body<B: Backend>() {
    let b = B::fresh().await;
    let store = b.mail();
    let mut failed_ids = Vec::new();
    for i in 0..5 {
        let id = store.enqueue(&mail(&format!("p{i}@example.org"), MailKind::SecurityNotice), 100).await.expect("w");
        store.claim(100, 1_000, 10).await.expect("claimed");
        store.mark_failed(&failure(id, 1_000, "down", None, true, 100 + i)).await.expect("given up");
        failed_ids.push(id);
    }
    let dead = store.enqueue(&mail("dead@example.org", MailKind::PasswordReset), 100).await.expect("written");
    store.claim(100, 1_000, 10).await.expect("claimed");
    let forget = FailedTry { forget_body: true, ..failure(dead, 1_000, "link expired", None, false, 120) };
    store.mark_failed(&forget).await.expect("given up, body forgotten");
    let pending = store.enqueue(&mail("due@example.org", MailKind::PasswordReset), 100).await.expect("written");
    // Paged newest first by key.
    let first = store.failed(None, 3).await.expect("listed");
    let second = store.failed(Some(first[2].id), 3).await.expect("listed");
    let third = store.failed(Some(second[2].id), 3).await.expect("listed");
    let listed: Vec<i64> = first.iter().chain(&second).chain(&third).map(|f| f.id).collect();
    let mut newest_first = failed_ids.clone();
    newest_first.push(dead);
    newest_first.reverse();
    assert_eq!(listed, newest_first);
    assert!(!store.retry(pending, 300).await.expect("retried"), "a mail still queued is not a failed one");
    assert!(!store.retry(999_999, 300).await.expect("retried"), "an unknown row");
    assert!(!store.retry(dead, 300).await.expect("retried"), "a mail whose body was forgotten");
    assert!(store.retry(failed_ids[0], 300).await.expect("retried"));
    assert!(!store.retry(failed_ids[0], 300).await.expect("retried"), "once");
    let claimed = store.claim(300, 1_000, 10).await.expect("claimed");
    let ids: BTreeSet<i64> = claimed.iter().map(|m| m.id).collect();
    assert_eq!(ids, BTreeSet::from([failed_ids[0], pending]));
    let retried = claimed.iter().find(|m| m.id == failed_ids[0]).expect("retried mail");
    assert_eq!((retried.attempts, retried.created_at), (0, 300), "its tries and age count from the retry");
    assert_eq!(store.failed(None, 10).await.expect("listed").len(), 5);
}

async fn mail_of_a_kind_this_build_does_not_know_is_left_alone<B: Backend>() {
    let b = B::fresh().await;
    let store = b.mail();
    b.execute(
        "INSERT INTO mail_outbox (recipient, kind, subject, text_body, html_body, created_at, next_attempt_at) \
         VALUES ('a@example.org', 'from_a_newer_release', 's', 't', 'h', 100, 100)",
    )
    .await;
    let known = store.enqueue(&mail("b@example.org", MailKind::SecurityNotice), 100).await.expect("written");
    let claimed = store.claim(200, 300, 10).await.expect("claimed");
    assert_eq!(claimed.iter().map(|m| m.id).collect::<Vec<_>>(), [known], "the unknown kind is not claimed");
    let untouched =
        b.count("SELECT count(*) FROM mail_outbox WHERE kind = 'from_a_newer_release' AND next_attempt_at = 100").await;
    assert_eq!(untouched, 1, "nor held");
}

async fn the_purge_deletes_old_sent_mail_and_expired_links_within_one_limit<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.mail();
    for at in [10, 20, 30, 1_000] {
        let id = store.enqueue(&mail("ana@example.org", MailKind::PasswordReset), at).await.expect("written");
        store.claim(at, at + 1, 10).await.expect("claimed");
        store.mark_sent(id, at + 1, at).await.expect("sent");
    }
    let waiting = store.enqueue(&mail("ana@example.org", MailKind::PasswordReset), 5).await.expect("written");
    let (_, old) = link(ana, 50);
    store.issue_link(&old, &mail("ana@example.org", MailKind::PasswordReset), 5, 0).await.expect("issued");
    let bruno = b.create_user("bruno").await;
    let (live_token, live) = link(bruno, 5_000);
    store.issue_link(&live, &mail("bruno@example.org", MailKind::PasswordReset), 5, 0).await.expect("issued");
    assert_eq!(store.purge(500, 100, 2).await.expect("purged"), 2, "two sent mails: the limit is shared");
    assert_eq!(store.purge(500, 100, 2).await.expect("purged"), 2, "the last sent mail and the expired link");
    assert_eq!(store.purge(500, 100, 2).await.expect("purged"), 0);
    assert!(store.find_link(&old.token_hash).await.expect("read").is_none(), "the expired link went");
    assert!(store.find_link(&live_token.hash()).await.expect("read").is_some(), "a live link stays");
    let unsent = store.claim(10_000, 20_000, 10).await.expect("claimed");
    assert_eq!(unsent.len(), 3, "mail not yet sent is never purged");
    assert!(unsent.iter().any(|m| m.id == waiting));
    assert_eq!(b.count("SELECT count(*) FROM mail_outbox WHERE sent_at = 1000").await, 1, "recent sent mail stays");
}

async fn links_are_issued_with_their_mail_within_the_accounts_limits_and_taken_once<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.mail();
    let ana_mail = mail("ana@example.org", MailKind::PasswordReset);
    let (first_token, first) = link(ana, 2_000);
    assert!(store.issue_link(&first, &ana_mail, 100, 60).await.expect("issued"));
    let found = store.find_link(&first_token.hash()).await.expect("read").expect("found");
    assert_eq!((found.user, &found.state), (ana, &first.state));
    assert_eq!(store.claim(100, 500, 10).await.expect("claimed").len(), 1, "its mail was written with it");

    let (second_token, second) = link(ana, 2_100);
    assert!(!store.issue_link(&second, &ana_mail, 150, 60).await.expect("read"), "within the quiet time");
    assert!(store.find_link(&second_token.hash()).await.expect("read").is_none());
    assert_eq!(store.claim(150, 500, 10).await.expect("claimed").len(), 0, "nor its mail written");
    assert!(store.issue_link(&second, &ana_mail, 200, 60).await.expect("issued"), "after the quiet time");
    assert!(store.find_link(&first_token.hash()).await.expect("read").is_some(), "a newer link kills no older one");
    let (third_token, third) = link(ana, 2_200);
    assert!(store.issue_link(&third, &ana_mail, 300, 60).await.expect("issued"));
    let (_, fourth) = link(ana, 2_300);
    assert!(!store.issue_link(&fourth, &ana_mail, 400, 60).await.expect("read"), "three live links at most");
    assert!(store.issue_link(&fourth, &ana_mail, 2_050, 60).await.expect("issued"), "once the first expired");

    let taken = store.take_link(&second_token.hash(), LinkPurpose::PasswordReset).await.expect("taken");
    assert_eq!(taken.expect("taken").user, ana);
    assert!(store.take_link(&second_token.hash(), LinkPurpose::PasswordReset).await.expect("taken").is_none(), "once");
    // Two takers at once: one gets it.
    let hash = third_token.hash();
    let outcomes = at_once(4, |_| {
        let store = store.clone();
        async move { store.take_link(&hash, LinkPurpose::PasswordReset).await.expect("taken").is_some() }
    })
    .await;
    assert_eq!(outcomes.iter().filter(|t| **t).count(), 1, "{outcomes:?}");
}

async fn an_accounts_links_are_forgotten_and_go_with_the_account<B: Backend>() {
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.mail();
    let (token, issued) = link(ana, 2_000);
    store.issue_link(&issued, &mail("ana@example.org", MailKind::PasswordReset), 100, 0).await.expect("issued");
    let (bia_token, bia_link) = link(bia, 2_000);
    store.issue_link(&bia_link, &mail("bia@example.org", MailKind::PasswordReset), 100, 0).await.expect("issued");
    assert_eq!(store.forget_links(ana).await.expect("forgotten"), 1);
    assert!(store.find_link(&token.hash()).await.expect("read").is_none());
    assert!(store.find_link(&bia_token.hash()).await.expect("read").is_some(), "only hers");
    b.execute(&format!("DELETE FROM users WHERE id = {}", bia.0)).await;
    assert!(store.find_link(&bia_token.hash()).await.expect("read").is_none(), "gone with the account");
}

async fn a_confirmation_link_confirms_the_address_it_was_sent_to_once<B: Backend>() {
    use credencial_ports::Confirmation;
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let store = b.mail();
    let address: String = {
        let rows = b.count(&format!("SELECT count(*) FROM users WHERE id = {} AND email <> ''", ana.0)).await;
        assert_eq!(rows, 1, "the test user has an address");
        b.users().find_summary_by_id(ana).await.expect("read").expect("ana").email
    };
    assert!(!store.email_verified(ana).await.expect("read"), "a new account starts unconfirmed");
    let confirm = |email: &str, expires_at: i64| {
        let token = SessionToken::generate();
        let state =
            LinkState { purpose: LinkPurpose::EmailConfirm, stamp: String::new(), expires_at, email: email.into() };
        (token.clone(), NewLink { token_hash: token.hash(), user: ana, state })
    };
    let ana_mail = mail(&address, MailKind::EmailConfirm);
    // Expired: nothing.
    let (old_token, old) = confirm(&address, 150);
    assert!(store.issue_link(&old, &ana_mail, 100, 0).await.expect("issued"));
    assert_eq!(store.confirm_email(&old_token.hash(), 150).await.expect("read"), Confirmation::NoLink);
    // A reset link is no confirmation link.
    let (reset_token, reset) = link(ana, 5_000);
    assert!(store.issue_link(&reset, &ana_mail, 200, 0).await.expect("issued"));
    assert_eq!(store.confirm_email(&reset_token.hash(), 300).await.expect("read"), Confirmation::NoLink);
    assert!(!store.email_verified(ana).await.expect("read"));
    // A link for another address (the account's changed since): taken, nothing confirmed.
    let (stale_token, stale) = confirm("antigo@example.org", 5_000);
    assert!(store.issue_link(&stale, &ana_mail, 300, 0).await.expect("issued"));
    assert_eq!(store.confirm_email(&stale_token.hash(), 400).await.expect("read"), Confirmation::AddressChanged(ana));
    assert!(!store.email_verified(ana).await.expect("read"));
    // The right one: confirmed, once.
    let (token, live) = confirm(&address, 5_000);
    assert!(store.issue_link(&live, &ana_mail, 400, 0).await.expect("issued"));
    assert_eq!(store.confirm_email(&token.hash(), 500).await.expect("read"), Confirmation::Confirmed(ana));
    assert!(store.email_verified(ana).await.expect("read"));
    assert_eq!(store.confirm_email(&token.hash(), 500).await.expect("read"), Confirmation::NoLink, "once");
    assert!(!store.email_verified(credencial_domain::UserId(999_999)).await.expect("read"), "an unknown account");
    // Saving the same address keeps the mark; another address clears it.
    let details = |email: &str| credencial_domain::account::AccountDetails {
        name: "Ana Nova".into(),
        email: credencial_domain::account::EmailAddress::parse(email).expect("an address"),
        avatar: String::new(),
    };
    b.users().update_details(ana, &details(&address)).await.expect("saved");
    assert!(store.email_verified(ana).await.expect("read"), "the same address stays confirmed");
    b.users().update_details(ana, &details("ana.nova@example.org")).await.expect("saved");
    assert!(!store.email_verified(ana).await.expect("read"), "a new address is unconfirmed");
}

/// A link of `purpose` for `user` carrying `email`, working until `expires_at`.
fn address_link(
    user: credencial_domain::UserId,
    purpose: LinkPurpose,
    email: &str,
    expires_at: i64,
) -> (SessionToken, NewLink) {
    let token = SessionToken::generate();
    let state = LinkState { purpose, stamp: String::new(), expires_at, email: email.into() };
    (token.clone(), NewLink { token_hash: token.hash(), user, state })
}

fn key(email: &str) -> String {
    credencial_domain::account::EmailAddress::parse(email).expect("an address").key().as_str().to_owned()
}

async fn address_of<B: Backend>(b: &B, user: credencial_domain::UserId) -> String {
    b.users().find_summary_by_id(user).await.expect("read").expect("the account").email
}

async fn a_change_request_replaces_the_last_one_and_refuses_a_taken_address<B: Backend>() {
    use credencial_ports::ChangeRequest;
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.mail();
    let before = address_of(&b, ana).await;
    let bia_address = address_of(&b, bia).await;
    let change = |email: &str| address_link(ana, LinkPurpose::EmailChange, email, 100_000);
    let (first_token, first) = change("ana.nova@example.org");
    let note = mail("ana.nova@example.org", MailKind::EmailConfirm);
    let asked = store.request_change(&first, &key("ana.nova@example.org"), &note, 100, 60).await.expect("asked");
    assert_eq!(asked, ChangeRequest::Sent);
    assert_eq!(store.pending_change(ana, 100).await.expect("read").as_deref(), Some("ana.nova@example.org"));
    assert_eq!(address_of(&b, ana).await, before, "the address waits for the link");
    assert_eq!(store.waiting().await.expect("counted"), 1, "the mail went in with the link");
    // Within the quiet time: nothing.
    let (_, soon) = change("ana.outra@example.org");
    let asked = store.request_change(&soon, &key("ana.outra@example.org"), &note, 150, 60).await.expect("asked");
    assert_eq!(asked, ChangeRequest::TooSoon);
    // Bia's address (in another case): taken, nothing written.
    let (_, taken) = change(&bia_address.to_uppercase());
    let asked = store.request_change(&taken, &key(&bia_address.to_uppercase()), &note, 200, 60).await.expect("asked");
    assert_eq!(asked, ChangeRequest::Taken);
    assert_eq!(store.waiting().await.expect("counted"), 1);
    // Her own current address is not "taken" by someone else.
    let (_, own) = change(&before);
    assert_eq!(store.request_change(&own, &key(&before), &note, 300, 60).await.expect("asked"), ChangeRequest::Sent);
    // A newer request replaces the older one.
    let (second_token, second) = change("ana.segunda@example.org");
    let asked = store.request_change(&second, &key("ana.segunda@example.org"), &note, 400, 60).await.expect("asked");
    assert_eq!(asked, ChangeRequest::Sent);
    assert!(store.find_link(&first_token.hash()).await.expect("read").is_none(), "superseded");
    assert!(store.find_link(&second_token.hash()).await.expect("read").is_some());
    assert_eq!(store.pending_change(ana, 400).await.expect("read").as_deref(), Some("ana.segunda@example.org"));
    assert_eq!(store.pending_change(ana, 100_000).await.expect("read"), None, "not once expired");
    assert_eq!(store.pending_change(bia, 400).await.expect("read"), None, "only hers");
    assert_eq!(store.cancel_change(ana).await.expect("cancelled"), 1);
    assert_eq!(store.pending_change(ana, 400).await.expect("read"), None);
}

async fn a_confirmed_change_sets_the_address_and_keeps_the_undo_links<B: Backend>() {
    use credencial_ports::{AddressSwitch, ChangeRequest, Switched};
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.mail();
    let old = address_of(&b, ana).await;
    let switch =
        |token: &SessionToken, email: &str, undo: Option<(String, NewLink, OutgoingMail)>, now| AddressSwitch {
            token_hash: token.hash(),
            purpose: LinkPurpose::EmailChange,
            user: ana,
            email: email.into(),
            email_key: key(email),
            undo,
            now,
        };
    let undo_of = |from: &str| {
        let (token, link) = address_link(ana, LinkPurpose::EmailUndo, from, 900_000);
        (token, (from.to_owned(), link, mail(from, MailKind::EmailUndo)))
    };
    let new = "ana.nova@example.org";
    let (token, change) = address_link(ana, LinkPurpose::EmailChange, new, 10_000);
    let note = mail(new, MailKind::EmailConfirm);
    assert_eq!(store.request_change(&change, &key(new), &note, 100, 0).await.expect("asked"), ChangeRequest::Sent);
    let (reset_token, reset) = link(ana, 10_000);
    assert!(store.issue_link(&reset, &mail(&old, MailKind::PasswordReset), 100, 0).await.expect("issued"));
    // Expired: nothing.
    let (undo_token, undo) = undo_of(&old);
    let late = store.switch_address(&switch(&token, new, Some(undo.clone()), 10_000)).await.expect("tried");
    assert_eq!(late, Switched::NoLink);
    // The wrong address (a link whose address was edited) or the wrong account: nothing.
    let wrong = store.switch_address(&switch(&token, "outra@example.org", Some(undo.clone()), 200)).await;
    assert_eq!(wrong.expect("tried"), Switched::NoLink);
    // Bia took the address meanwhile: nothing changes, the link stays.
    b.execute(&format!("UPDATE users SET email = '{new}', email_key = '{}' WHERE id = {}", key(new), bia.0)).await;
    let taken = store.switch_address(&switch(&token, new, Some(undo.clone()), 200)).await.expect("tried");
    assert_eq!(taken, Switched::Taken);
    assert_eq!(address_of(&b, ana).await, old);
    assert!(store.find_link(&token.hash()).await.expect("read").is_some(), "the link stays");
    b.execute(&format!(
        "UPDATE users SET email = 'bia.x@example.org', email_key = 'bia.x@example.org' WHERE id = {}",
        bia.0
    ))
    .await;
    // The account's address is no longer the one the change was asked from: nothing.
    let (_, stale) = undo_of("antigo@example.org");
    let moved = store.switch_address(&switch(&token, new, Some(stale), 200)).await.expect("tried");
    assert_eq!(moved, Switched::NoLink);
    // Now: switched, confirmed, the reset link mailed to the old address dead, the undo link and its mail written.
    let waiting = store.waiting().await.expect("counted");
    let done = store.switch_address(&switch(&token, new, Some(undo), 200)).await.expect("switched");
    assert_eq!(done, Switched::Switched);
    assert_eq!(address_of(&b, ana).await, new);
    assert!(store.email_verified(ana).await.expect("read"), "confirmed by the link");
    assert!(store.find_link(&reset_token.hash()).await.expect("read").is_none(), "links to the old address die");
    assert!(store.find_link(&token.hash()).await.expect("read").is_none(), "used");
    assert!(store.find_link(&undo_token.hash()).await.expect("read").is_some());
    assert_eq!(store.waiting().await.expect("counted"), waiting + 1, "the undo mail");
    // A second change (by whoever holds the account) keeps the first undo link alive.
    let third = "ana.terceira@example.org";
    let (token, change) = address_link(ana, LinkPurpose::EmailChange, third, 10_000);
    assert_eq!(store.request_change(&change, &key(third), &note, 300, 0).await.expect("asked"), ChangeRequest::Sent);
    let (second_undo_token, second_undo) = undo_of(new);
    let done = store.switch_address(&switch(&token, third, Some(second_undo), 400)).await.expect("switched");
    assert_eq!(done, Switched::Switched);
    assert!(store.find_link(&undo_token.hash()).await.expect("read").is_some(), "the first undo link survives");
    assert!(store.find_link(&second_undo_token.hash()).await.expect("read").is_some());
}

async fn an_undo_puts_the_old_address_back_and_kills_every_link<B: Backend>() {
    use credencial_ports::{AddressSwitch, Switched};
    let b = B::fresh().await;
    let ana = b.create_user("ana").await;
    let bia = b.create_user("bia").await;
    let store = b.mail();
    let old = address_of(&b, ana).await;
    let stolen = "ladrao@example.org";
    b.execute(&format!("UPDATE users SET email = '{stolen}', email_key = '{}' WHERE id = {}", key(stolen), ana.0))
        .await;
    let undo = |token: &SessionToken, email: &str, now| AddressSwitch {
        token_hash: token.hash(),
        purpose: LinkPurpose::EmailUndo,
        user: ana,
        email: email.into(),
        email_key: key(email),
        undo: None,
        now,
    };
    let (first, first_link) = address_link(ana, LinkPurpose::EmailUndo, &old, 5_000);
    let (second, second_link) = address_link(ana, LinkPurpose::EmailUndo, "meio@example.org", 5_000);
    let (reset, reset_link) = link(ana, 5_000);
    for l in [&first_link, &second_link, &reset_link] {
        assert!(store.issue_link(l, &mail(stolen, MailKind::EmailUndo), 100, 0).await.expect("issued"));
    }
    // A change link is no undo link, and an expired undo does nothing.
    let wrong_purpose = AddressSwitch { purpose: LinkPurpose::EmailChange, ..undo(&first, &old, 200) };
    assert_eq!(store.switch_address(&wrong_purpose).await.expect("tried"), Switched::NoLink);
    assert_eq!(store.switch_address(&undo(&first, &old, 5_000)).await.expect("tried"), Switched::NoLink);
    // Bia holds the old address: nothing changes.
    b.execute(&format!("UPDATE users SET email = '{old}', email_key = '{}' WHERE id = {}", key(&old), bia.0)).await;
    assert_eq!(store.switch_address(&undo(&first, &old, 200)).await.expect("tried"), Switched::Taken);
    assert_eq!(address_of(&b, ana).await, stolen);
    b.execute(&format!(
        "UPDATE users SET email = 'bia.x@example.org', email_key = 'bia.x@example.org' WHERE id = {}",
        bia.0
    ))
    .await;
    assert_eq!(store.switch_address(&undo(&first, &old, 200)).await.expect("undone"), Switched::Switched);
    assert_eq!(address_of(&b, ana).await, old);
    assert!(store.email_verified(ana).await.expect("read"), "the link was opened from it");
    for (token, what) in [(&first, "used"), (&second, "the other undo link"), (&reset, "a reset link")] {
        assert!(store.find_link(&token.hash()).await.expect("read").is_none(), "{what} is dead");
    }
    assert_eq!(store.switch_address(&undo(&second, "meio@example.org", 200)).await.expect("tried"), Switched::NoLink);
}
