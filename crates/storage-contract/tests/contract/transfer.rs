//! The transfer's description of the schema (`credencial_ports::TABLES`,
//! what `export` and `import` move) against each engine's own catalogue:
//! every table and every column, nothing more, so a migration that adds a
//! column to one engine and not to the description fails here.

use credencial_ports::TABLES;
use credencial_storage_contract::{contract, Backend, Engine};

contract!(the_transfer_describes_every_table_and_column_of_the_schema);

async fn the_transfer_describes_every_table_and_column_of_the_schema<B: Backend>() {
    let b = B::fresh().await;
    let tables = match B::ENGINE {
        Engine::Postgres => {
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_sqlx_migrations'"
        }
        Engine::Sqlite => {
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' \
             AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'"
        }
    };
    assert_eq!(b.count(tables).await, TABLES.len() as i64, "every table of the schema is transferred");
    for table in TABLES {
        let columns = match B::ENGINE {
            Engine::Postgres => format!(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '{}'",
                table.name
            ),
            Engine::Sqlite => format!("SELECT count(*) FROM pragma_table_info('{}')", table.name),
        };
        assert_eq!(b.count(&columns).await, table.columns.len() as i64, "the columns of {}", table.name);
        for (column, _) in table.columns {
            // Fails (panics with the engine's message) if the column is not there.
            b.count(&format!("SELECT count({column}) FROM {}", table.name)).await;
        }
    }
}
