# Recipes for the common tasks; each is also a plain command in README.md.

# Run the service with its demo data on 127.0.0.1:8000.
demo:
    cargo run --release -- demo

# Run every test (needs PostgreSQL on 127.0.0.1:5432).
test:
    cargo test --workspace

# Format, lint and test, as CI does.
ci:
    bash .ci/run

# Benchmarks against the release binary (see docs/performance.md).
bench:
    bash bench/run.sh

# Mixed load and soak: 1,000 req/s for 5 minutes (see docs/performance.md).
soak:
    bash bench/soak.sh

# Schema-driven fuzzing of every JSON route against the release binary.
fuzz:
    bash tests/fuzz/run.sh

# Interop with a real Django + djangorestframework-simplejwt resource server.
interop:
    bash tests/interop/simplejwt/run.sh
