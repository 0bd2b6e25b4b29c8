-- Wrong second-factor codes count in a budget of their own per account
-- (issue 43): keys 'code:<username>' beside 'username:' and 'address:'.
-- SQLite cannot change a CHECK: the table is made again, its rows kept
-- (the counts in force go on).
CREATE TABLE login_failures_next (
    key           TEXT PRIMARY KEY
        CHECK (length(key) > 0 AND (key GLOB 'username:?*' OR key GLOB 'client:?*' OR key GLOB 'address:?*'
                                    OR key GLOB 'code:?*')),
    failures      INTEGER NOT NULL CHECK (failures > 0),
    window_start  INTEGER NOT NULL
) STRICT;
INSERT INTO login_failures_next (key, failures, window_start)
    SELECT key, failures, window_start FROM login_failures;
DROP TABLE login_failures;
ALTER TABLE login_failures_next RENAME TO login_failures;
CREATE INDEX login_failures_window_start_idx ON login_failures (window_start);
