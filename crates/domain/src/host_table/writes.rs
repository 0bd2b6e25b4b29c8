//! What one login writes on the host user row besides the lookup value, and
//! when: the client component's options (`create_users`,
//! `update_fields_on_login`, `user_defaults`, `last_login_column`,
//! `date_joined_column`), after django-sabia-auth's and
//! django-suap-auth's `CREATE_USER`, `UPDATE_FIELDS_ON_LOGIN`,
//! `USER_DEFAULTS` and Django's `last_login`/`date_joined`.

use super::{check_value, ColumnName, ColumnType, HostValue, TableShape, ValueKind};

/// When a value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOn {
    /// On every login: when the row is created and when it is updated.
    EveryLogin,
    /// Only when the login creates the row.
    Creation,
}

/// One column a login writes, with its value and when.
#[derive(Debug, Clone, PartialEq)]
pub struct HostWrite {
    /// The column.
    pub column: ColumnName,
    /// The value (personal data: never logged).
    pub value: HostValue,
    /// When it is written.
    pub on: WriteOn,
}

/// The client component's options of what a login writes.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginWrites {
    /// Whether a person without a host user row gets one (`true`, the
    /// default) or is refused (only existing host users may log in).
    pub create_users: bool,
    /// The mapped columns refreshed on every login; the other mapped
    /// columns are written only when the row is created. `None` (the
    /// default): every mapped column is refreshed.
    pub update_fields_on_login: Option<Vec<ColumnName>>,
    /// Values of new rows (column → value), written only on creation; a
    /// mapped column's value takes precedence.
    pub user_defaults: Vec<(ColumnName, HostValue)>,
    /// A timestamp column set to the login's time on every login.
    pub last_login_column: Option<ColumnName>,
    /// A timestamp column set to the login's time when the row is created.
    pub date_joined_column: Option<ColumnName>,
}

impl Default for LoginWrites {
    fn default() -> Self {
        Self {
            create_users: true,
            update_fields_on_login: None,
            user_defaults: Vec::new(),
            last_login_column: None,
            date_joined_column: None,
        }
    }
}

impl LoginWrites {
    /// The writes of a login at `now` (Unix seconds) whose profile mapped
    /// to `mapped`: the defaults (on creation), the mapped values (on every
    /// login when refreshed, else on creation), the login time (every
    /// login) and the creation time (on creation), in that order, so that
    /// a later entry for a column wins over an earlier one.
    pub fn writes(&self, mapped: Vec<(ColumnName, HostValue)>, now: i64) -> Vec<HostWrite> {
        let refreshed = |column: &ColumnName| match &self.update_fields_on_login {
            None => WriteOn::EveryLogin,
            Some(list) if list.contains(column) => WriteOn::EveryLogin,
            Some(_) => WriteOn::Creation,
        };
        let defaults = self.user_defaults.iter().map(|(column, value)| HostWrite {
            column: column.clone(),
            value: value.clone(),
            on: WriteOn::Creation,
        });
        let mapped = mapped.into_iter().map(|(column, value)| HostWrite { on: refreshed(&column), column, value });
        let times = [(&self.last_login_column, WriteOn::EveryLogin), (&self.date_joined_column, WriteOn::Creation)];
        let times = times.into_iter().filter_map(|(column, on)| {
            column.as_ref().map(|column| HostWrite { column: column.clone(), value: HostValue::Timestamp(now), on })
        });
        defaults.chain(mapped).chain(times).collect()
    }

    /// The columns these options write, with the kind of value each needs
    /// (for the start-up check of the table; the mapped ones are the
    /// attribute map's).
    pub fn column_needs(&self) -> Vec<(&str, ValueKind)> {
        let defaults = self.user_defaults.iter().map(|(c, v)| (c.as_str(), v.kind()));
        let times = [&self.last_login_column, &self.date_joined_column]
            .into_iter()
            .flatten()
            .map(|c| (c.as_str(), ValueKind::Timestamp));
        defaults.chain(times).collect()
    }

    /// The start-up check of the options against the host table `shape`
    /// and the mapped columns: every column of `update_fields_on_login` is
    /// mapped; every default fits its column; the time columns are
    /// timestamps. (That the columns exist and are writable is checked
    /// with the mapped ones.) The message names the setting.
    pub fn check(&self, shape: &TableShape, mapped: &[&str]) -> Result<(), String> {
        if let Some(list) = &self.update_fields_on_login {
            if let Some(column) = list.iter().find(|c| !mapped.contains(&c.as_str())) {
                return Err(format!(
                    "update_fields_on_login: column \"{column}\" is not mapped by the attribute map (mapped: {})",
                    mapped.join(", ")
                ));
            }
        }
        for (column, value) in &self.user_defaults {
            let Some(found) = shape.column(column.as_str()) else {
                return Err(format!("user_defaults: column \"{column}\" does not exist in table \"{}\"", shape.table));
            };
            if let Err(problem) = check_value(found, value) {
                return Err(format!("user_defaults: the value for column \"{column}\" does not fit it: {problem}"));
            }
        }
        if let (Some(last), Some(joined)) = (&self.last_login_column, &self.date_joined_column) {
            if last == joined {
                return Err(format!(
                    "date_joined_column: column \"{joined}\" is also last_login_column; the creation time would never change"
                ));
            }
        }
        for (setting, column) in
            [("last_login_column", &self.last_login_column), ("date_joined_column", &self.date_joined_column)]
        {
            let Some(column) = column else { continue };
            match shape.column(column.as_str()) {
                None => {
                    return Err(format!("{setting}: column \"{column}\" does not exist in table \"{}\"", shape.table))
                }
                Some(c) if c.column_type != ColumnType::Timestamp => {
                    return Err(format!("{setting}: column \"{column}\" is {}; it must be a timestamp", c.column_type))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HostColumn, TableName};
    use super::*;

    fn column(name: &str) -> ColumnName {
        ColumnName::parse(name).expect("a column name")
    }

    fn host_column(name: &str, column_type: ColumnType) -> HostColumn {
        HostColumn {
            name: name.into(),
            type_name: String::new(),
            column_type,
            max_length: None,
            required: false,
            generated: false,
            unique: false,
        }
    }

    fn shape() -> TableShape {
        TableShape {
            table: TableName::parse("host_users").expect("name"),
            columns: vec![
                host_column("email", ColumnType::Text),
                host_column("first_name", ColumnType::Text),
                host_column("origin", ColumnType::Text),
                host_column("is_staff", ColumnType::Boolean),
                host_column("last_login", ColumnType::Timestamp),
                host_column("date_joined", ColumnType::Timestamp),
            ],
        }
    }

    fn mapped() -> Vec<(ColumnName, HostValue)> {
        vec![
            (column("email"), HostValue::Text("ana@example.org".into())),
            (column("first_name"), HostValue::Text("Ana".into())),
        ]
    }

    fn on_of(writes: &[HostWrite]) -> Vec<(&str, WriteOn)> {
        writes.iter().map(|w| (w.column.as_str(), w.on)).collect()
    }

    #[test]
    fn by_default_every_mapped_column_is_written_on_every_login_and_nothing_else() {
        let writes = LoginWrites::default().writes(mapped(), 1_000);
        assert_eq!(on_of(&writes), [("email", WriteOn::EveryLogin), ("first_name", WriteOn::EveryLogin)]);
        assert!(LoginWrites::default().create_users);
    }

    #[test]
    fn only_the_listed_columns_are_refreshed_and_defaults_and_times_have_their_moments() {
        let options = LoginWrites {
            update_fields_on_login: Some(vec![column("email")]),
            user_defaults: vec![
                (column("is_staff"), HostValue::Bool(false)),
                (column("first_name"), HostValue::Text("x".into())),
            ],
            last_login_column: Some(column("last_login")),
            date_joined_column: Some(column("date_joined")),
            ..LoginWrites::default()
        };
        let writes = options.writes(mapped(), 1_000);
        assert_eq!(
            on_of(&writes),
            [
                ("is_staff", WriteOn::Creation),
                ("first_name", WriteOn::Creation),
                ("email", WriteOn::EveryLogin),
                ("first_name", WriteOn::Creation),
                ("last_login", WriteOn::EveryLogin),
                ("date_joined", WriteOn::Creation),
            ]
        );
        assert_eq!(writes[3].value, HostValue::Text("Ana".into()), "the mapped value comes after the default");
        assert_eq!((&writes[4].value, &writes[5].value), (&HostValue::Timestamp(1_000), &HostValue::Timestamp(1_000)));
    }

    #[test]
    fn the_options_are_checked_against_the_table_and_the_map() {
        let mapped = ["email", "first_name"];
        let good = LoginWrites {
            update_fields_on_login: Some(vec![column("email")]),
            user_defaults: vec![(column("origin"), HostValue::Text("credencial".into()))],
            last_login_column: Some(column("last_login")),
            date_joined_column: Some(column("date_joined")),
            ..LoginWrites::default()
        };
        assert_eq!(good.check(&shape(), &mapped), Ok(()));
        let not_mapped = LoginWrites { update_fields_on_login: Some(vec![column("origin")]), ..good.clone() };
        assert!(not_mapped.check(&shape(), &mapped).expect_err("refused").starts_with("update_fields_on_login"));
        let missing = LoginWrites { user_defaults: vec![(column("nope"), HostValue::Bool(true))], ..good.clone() };
        assert!(missing.check(&shape(), &mapped).expect_err("refused").contains("\"nope\" does not exist"));
        let unfit =
            LoginWrites { user_defaults: vec![(column("is_staff"), HostValue::Text("sim".into()))], ..good.clone() };
        assert!(unfit.check(&shape(), &mapped).expect_err("refused").starts_with("user_defaults"));
        let text_time = LoginWrites { last_login_column: Some(column("email")), ..good.clone() };
        assert!(text_time.check(&shape(), &mapped).expect_err("refused").contains("must be a timestamp"));
        let no_time = LoginWrites { date_joined_column: Some(column("joined")), ..good.clone() };
        assert!(no_time.check(&shape(), &mapped).expect_err("refused").starts_with("date_joined_column"));
        let same = LoginWrites { date_joined_column: Some(column("last_login")), ..good };
        assert!(same.check(&shape(), &mapped).expect_err("refused").contains("also last_login_column"));
    }
}
