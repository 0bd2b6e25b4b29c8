//! An in-memory fake of `SessionStore` that keeps the port's contract
//! (sessions found by the hash of their id while both limits hold; ending
//! deletes), for the use cases that open and end sessions. Every account
//! counts as active.

use std::sync::{Arc, Mutex};

use credencial_ports::{MockSessionStore, NewSession, ResumedSession, SessionEntry};

/// What the fake holds: `(record id, session, last activity)`.
#[derive(Clone, Default)]
pub struct Sessions {
    pub rows: Arc<Mutex<Vec<(i64, NewSession, i64)>>>,
}

impl Sessions {
    /// How many sessions are stored.
    pub fn count(&self) -> usize {
        self.rows.lock().expect("lock").len()
    }

    /// A fake store over these sessions.
    pub fn store(&self) -> MockSessionStore {
        let mut store = MockSessionStore::new();
        let rows = Arc::clone(&self.rows);
        store.expect_create().returning(move |s| {
            let mut rows = rows.lock().expect("lock");
            let id = rows.iter().map(|r| r.0).max().unwrap_or(0) + 1;
            rows.push((id, s.clone(), s.now));
            Ok(id)
        });
        let rows = Arc::clone(&self.rows);
        store.expect_resume().returning(move |hash, now, idle_since, touch_before| {
            let mut rows = rows.lock().expect("lock");
            let found =
                rows.iter_mut().find(|(_, s, seen)| &s.token_hash == hash && s.expires_at > now && *seen >= idle_since);
            Ok(found.map(|(id, s, seen)| {
                if *seen < touch_before {
                    *seen = now;
                }
                ResumedSession {
                    id: *id,
                    user: s.user,
                    auth_time: s.auth_time,
                    amr: s.amr.clone(),
                    acr: s.acr.clone(),
                    must_change_password: false,
                    second_factor_pending: s.second_factor_pending,
                    display_name: "Ana".into(),
                }
            }))
        });
        let rows = Arc::clone(&self.rows);
        store.expect_end().returning(move |hash| {
            let mut rows = rows.lock().expect("lock");
            let before = rows.len();
            rows.retain(|(_, s, _)| &s.token_hash != hash);
            Ok(rows.len() < before)
        });
        let rows = Arc::clone(&self.rows);
        store.expect_end_one().returning(move |user, id| {
            let mut rows = rows.lock().expect("lock");
            let before = rows.len();
            rows.retain(|(i, s, _)| !(*i == id && s.user == user));
            Ok(rows.len() < before)
        });
        let rows = Arc::clone(&self.rows);
        store.expect_end_all().returning(move |user, except| {
            let mut rows = rows.lock().expect("lock");
            let before = rows.len();
            rows.retain(|(i, s, _)| s.user != user || Some(*i) == except);
            Ok((before - rows.len()) as u64)
        });
        let rows = Arc::clone(&self.rows);
        store.expect_list().returning(move |user, now, idle_since, limit| {
            let rows = rows.lock().expect("lock");
            let mut live: Vec<SessionEntry> = rows
                .iter()
                .filter(|(_, s, seen)| s.user == user && s.expires_at > now && *seen >= idle_since)
                .map(|(id, s, seen)| SessionEntry {
                    id: *id,
                    created_at: s.now,
                    last_seen_at: *seen,
                    amr: s.amr.clone(),
                    device: s.device.clone(),
                    place: s.place.clone(),
                })
                .collect();
            live.sort_by_key(|e| std::cmp::Reverse((e.last_seen_at, e.id)));
            live.truncate(limit as usize);
            Ok(live)
        });
        store
    }
}
