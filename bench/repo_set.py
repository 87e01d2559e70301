"""A labelled set of real-repository style: three projects of 52 to 60 memories each.

usage: .venv/bin/python bench/repo_set.py   (prints a summary of the set)

Where ``bench/coding_set.py`` holds 41 memories of one project in four languages, a project a
team has worked in for a while holds many more, and many of them alike: who owns each module,
how each module's tests run, what each environment variable does, the pitfalls met in each
module, and the decisions of the project. This set has three such projects, in English:

- ``ledgerly``: a Django accounting service (Python, Celery, PostgreSQL);
- ``tidewater``: a Rust command-line tool and library that syncs tide-gauge data;
- ``harbor``: a TypeScript monorepo (a Next.js web app, a Fastify API, shared packages).

Each project's memories come from four tables: its modules (four memories each: what it
holds, its owner, its tests, a pitfall), its environment variables (one each), its decisions and its
conventions (one each, written out). So memories of one project share most of their words
(``tests``, ``owned by``, the project's name), as they do in a real repository, and a
question must find the one it is about among ten that look like it.

The questions, written by hand, are:

- ``owner``, ``tests``, ``pitfall``, ``setting``, ``decision``: a developer's question, in
  their words, that exactly one memory answers (``expected``: its key);
- ``negative``: a plausible question about the same project that nothing stored answers
  (same vocabulary, same modules).

This set is a test set: the confidence model and the load floor are never fitted on it
(``bench/calibration.py``). Everything is in the tables below; ``build()`` only assembles
them, with no randomness, so the set is identical on every run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

__all__ = ["PROJECTS", "Memory", "Question", "RepoSet", "build"]


@dataclass(frozen=True)
class Memory:
    """One stored memory of one project."""

    key: str  # "<project>/<kind>/<slug>"; unique
    project: str
    kind: str  # owner, tests, pitfall, setting, decision, convention
    title: str
    text: str


@dataclass(frozen=True)
class Question:
    key: str
    project: str
    text: str
    expected: tuple[str, ...]  # memory keys that answer it; () for none
    category: str


@dataclass(frozen=True)
class RepoSet:
    memories: tuple[Memory, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class _Module:
    path: str
    purpose: str
    owner: str
    tests: str  # the command, and what to know about it
    pitfall: tuple[str, str]  # (title, text)


@dataclass(frozen=True)
class _Project:
    name: str
    modules: tuple[_Module, ...]
    settings: tuple[tuple[str, str], ...]  # (variable, what it does and its default)
    decisions: tuple[tuple[str, str], ...]  # (title, text)
    conventions: tuple[tuple[str, str], ...]  # (title, text)
    #: (category, slug the question is about, question); the slug names a module path
    #: (owner, tests, pitfall), a variable (setting) or a decision/convention title.
    questions: tuple[tuple[str, str, str], ...]
    negatives: tuple[str, ...]


_LEDGERLY: Final = _Project(
    "ledgerly",
    modules=(
        _Module(
            "ledgerly/invoices",
            "invoice numbering, PDF rendering and sending",
            "the Billing team",
            "`pytest ledgerly/invoices -m 'not pdf'` runs in seconds; the PDF tests need"
            " `wkhtmltopdf` installed and run only with `-m pdf`",
            (
                "Invoice numbers are allocated inside the transaction",
                "`InvoiceNumberSequence.next()` must be called inside the same transaction"
                " that saves the invoice: calling it before `atomic()` left gaps in the"
                " numbering, which auditors flag.",
            ),
        ),
        _Module(
            "ledgerly/ledger",
            "double-entry journal, accounts and balances",
            "the Core Accounting team",
            "`pytest ledgerly/ledger` needs a real PostgreSQL (the balance triggers are SQL);"
            " `make db-test` starts one in Docker",
            (
                "Never update a journal entry in place",
                "Journal entries are append-only: a correction is a reversing entry plus a new"
                " one (`JournalEntry.reverse()`). A migration that updated `amount` in place"
                " broke the trial balance of closed periods.",
            ),
        ),
        _Module(
            "ledgerly/bank_feeds",
            "importing bank transactions (Plaid, OFX files) and matching them",
            "the Integrations team",
            "`pytest ledgerly/bank_feeds --record-mode=none` replays recorded Plaid cassettes;"
            " re-record them with `--record-mode=rewrite` and a sandbox key",
            (
                "OFX amounts use the account's sign convention",
                "Credit-card OFX files report purchases as positive amounts; `ofx_import`"
                " flips the sign for accounts whose `kind` is `credit_card`. Forgetting it"
                " doubled balances instead of reducing them.",
            ),
        ),
        _Module(
            "ledgerly/reports",
            "profit and loss, balance sheet and VAT reports",
            "the Reporting team",
            "`pytest ledgerly/reports --snapshot-update` rewrites the expected report"
            " snapshots; review the diff before committing it",
            (
                "Report periods are closed-open intervals",
                "`ReportPeriod(start, end)` includes `start` and excludes `end`: the March"
                " report is `ReportPeriod(date(2024, 3, 1), date(2024, 4, 1))`. Passing the"
                " last day of the month silently dropped the month's final day.",
            ),
        ),
        _Module(
            "ledgerly/payroll",
            "salaries, payslips and tax withholding",
            "the Payroll team",
            "`pytest ledgerly/payroll` uses the frozen tax tables in `tests/fixtures/tax_2024`;"
            " update them only when the tax authority publishes new rates",
            (
                "Withholding rounds per payslip, not per line",
                "Tax withholding is rounded once per payslip with `round_half_even`; rounding"
                " each line made payslips differ by a cent from the tax office's calculator.",
            ),
        ),
        _Module(
            "ledgerly/auth",
            "login, SSO with SAML, API tokens and permissions",
            "the Platform Security team",
            "`pytest ledgerly/auth` plus `make saml-e2e`, which starts a test identity provider"
            " (keycloak) and takes about four minutes",
            (
                "SAML clock skew",
                "SAML assertions are rejected when the server clock drifts: `SAML_ALLOWED_SKEW`"
                " is 90 seconds. Customers on Azure AD saw random login failures until NTP was"
                " enabled on the worker hosts.",
            ),
        ),
        _Module(
            "ledgerly/tasks",
            "Celery tasks: scheduled jobs, e-mail sending, exports",
            "the Platform team",
            "Celery tasks are tested eagerly with `CELERY_TASK_ALWAYS_EAGER=1 pytest"
            " ledgerly/tasks`; the scheduled ones also have a beat schedule test",
            (
                "Tasks take ids, not model instances",
                "Celery tasks receive primary keys and reload the row: a task given a model"
                " instance serialized stale data and once e-mailed an invoice with the old"
                " total.",
            ),
        ),
        _Module(
            "ledgerly/api",
            "the public REST API (Django REST framework) and its OpenAPI schema",
            "the API team",
            "`pytest ledgerly/api` and `make openapi-check`, which fails when the committed"
            " `openapi.yaml` differs from the generated schema",
            (
                "Pagination cursors are opaque",
                "The public API paginates with opaque cursors (`CursorPagination`); a client"
                " that parsed the base64 cursor broke when we added the tie-breaker column."
                " Never promise the cursor's format.",
            ),
        ),
        _Module(
            "ledgerly/currencies",
            "exchange rates and multi-currency conversion",
            "the Core Accounting team",
            "`pytest ledgerly/currencies` uses the rates fixture `ecb_rates.xml`; no test may"
            " call the ECB feed",
            (
                "Convert with the rate of the transaction date",
                "Foreign-currency transactions are converted at the ECB rate of their booking"
                " date (`rate_on(date)`), never today's rate; revaluation at period end is a"
                " separate journal entry.",
            ),
        ),
        _Module(
            "ledgerly/web",
            "the Django templates, HTMX views and static assets",
            "the Frontend team",
            "`npm run test` in `ledgerly/web/static` for the scripts and `pytest"
            " ledgerly/web` for the views; Playwright checks run nightly only",
            (
                "HTMX requests need the CSRF header",
                "HTMX posts must send `X-CSRFToken`; the base template sets it with"
                " `hx-headers`. A page that overrode `hx-headers` lost it and every form"
                " there failed with 403.",
            ),
        ),
    ),
    settings=(
        ("LEDGERLY_SMTP_TIMEOUT", "seconds before sending an e-mail gives up; default 10"),
        (
            "LEDGERLY_PDF_WORKERS",
            "how many processes render invoice PDFs in parallel; default 2",
        ),
        (
            "LEDGERLY_FEED_SYNC_MINUTES",
            "how often bank feeds are synced, in minutes; default 240",
        ),
        (
            "LEDGERLY_READ_REPLICA_URL",
            "a PostgreSQL URL for reports to read from a replica; unset means the primary",
        ),
        ("LEDGERLY_MAX_UPLOAD_MB", "largest receipt upload accepted, in megabytes; default 15"),
        ("LEDGERLY_SESSION_DAYS", "how long a login session lasts, in days; default 14"),
        ("LEDGERLY_SENTRY_DSN", "where errors are reported; unset in development"),
        ("LEDGERLY_FEATURE_FLAGS", "comma-separated flags to turn on, e.g. `new-vat-report`"),
        ("LEDGERLY_EXPORT_BUCKET", "the S3 bucket that CSV and PDF exports are written to"),
        (
            "LEDGERLY_RATE_LIMIT",
            "API requests allowed per token per minute; default 600",
        ),
    ),
    decisions=(
        (
            "Celery with Redis rather than RQ",
            "Background jobs run on Celery with Redis as the broker. We chose it over RQ"
            " because we need periodic tasks (beat) and task routing to the PDF queue.",
        ),
        (
            "Money as Decimal with four places",
            "Amounts are `Decimal` with four decimal places (`MONEY_PLACES = 4`) and rounded to"
            " the currency's minor unit only for display and payment; floats are forbidden.",
        ),
        (
            "One database per region",
            "EU customers live in the Frankfurt database and US customers in Virginia;"
            " `TenantRouter` picks the connection from the tenant's region. No query may join"
            " across regions.",
        ),
        (
            "Soft delete for customers and invoices",
            "Customers and invoices are never deleted: `deleted_at` is set and the default"
            " manager hides them, because invoices must be kept ten years.",
        ),
        (
            "Feature flags in the database",
            "Flags live in the `feature_flag` table and are read through `flags.enabled(name,"
            " tenant)`; the environment variable only forces flags on in development.",
        ),
        (
            "Django admin is internal only",
            "The Django admin is served on the internal host `admin.internal` behind the VPN"
            " and never on the public domain.",
        ),
    ),
    conventions=(
        (
            "Migrations are reviewed by Core Accounting",
            "Every migration touching a table of the ledger app needs an approval from Core"
            " Accounting, and data migrations must be reversible.",
        ),
        (
            "Type hints and mypy strict in new modules",
            "New modules are added to the `strict` list in `mypy.ini`; a module leaves the"
            " list only with a comment saying why.",
        ),
        (
            "Service functions, thin views",
            "Business logic lives in `services.py` functions of each app; views and"
            " serializers call them and hold no rules of their own.",
        ),
        (
            "Commit messages name the ticket",
            "A commit message starts with the Linear ticket, e.g. `LED-1234: fix VAT rounding`;"
            " the changelog is built from them.",
        ),
    ),
    questions=(
        (
            "owner",
            "ledgerly/payroll",
            "Who do I ask to review my change to how payslips are calculated?",
        ),
        ("owner", "ledgerly/bank_feeds", "Which team looks after the Plaid import code?"),
        ("owner", "ledgerly/auth", "Whose approval does a change to single sign-on need?"),
        (
            "tests",
            "ledgerly/invoices",
            "The invoice PDF tests are skipped on my laptop, how do I run them?",
        ),
        ("tests", "ledgerly/ledger", "Why do the ledger tests fail without Docker?"),
        (
            "tests",
            "ledgerly/bank_feeds",
            "How do I refresh the recorded bank API responses used in tests?",
        ),
        (
            "pitfall",
            "ledgerly/invoices",
            "Auditors found gaps in our invoice numbers, what causes that?",
        ),
        (
            "pitfall",
            "ledgerly/reports",
            "The monthly report is missing the last day of the month, why?",
        ),
        (
            "pitfall",
            "ledgerly/auth",
            "Some Azure customers randomly cannot log in, what should I check?",
        ),
        ("pitfall", "ledgerly/tasks", "Can I pass a model object to a background job?"),
        (
            "pitfall",
            "ledgerly/bank_feeds",
            "Credit card balances doubled after importing a statement file",
        ),
        (
            "setting",
            "LEDGERLY_FEED_SYNC_MINUTES",
            "How often do we pull new transactions from the bank connections?",
        ),
        ("setting", "LEDGERLY_MAX_UPLOAD_MB", "What is the size limit for uploading a receipt?"),
        ("setting", "LEDGERLY_RATE_LIMIT", "How many API calls per minute can one token make?"),
        ("setting", "LEDGERLY_READ_REPLICA_URL", "Can reports read from a database replica?"),
        (
            "decision",
            "Celery with Redis rather than RQ",
            "Why don't we use RQ for background jobs?",
        ),
        (
            "decision",
            "Money as Decimal with four places",
            "How many decimal places do we keep on amounts?",
        ),
        ("decision", "One database per region", "Where is the data of European customers stored?"),
        (
            "decision",
            "Soft delete for customers and invoices",
            "What happens when a user deletes an invoice?",
        ),
        ("convention", "Commit messages name the ticket", "How should I format my commit message?"),
        (
            "convention",
            "Service functions, thin views",
            "Where should business logic go in a Django app here?",
        ),
    ),
    negatives=(
        "Which team owns the mobile app?",
        "How do I run the load tests against staging?",
        "What is the default timeout for calls to the Stripe API?",
        "Which version of Python does production run?",
        "How do we back up the Redis broker?",
        "Who approves changes to the marketing website?",
        "How are invoices translated into German?",
        "What is our policy for rotating database passwords?",
        "How do I get access to the production logs?",
        "Which accounting standard do the reports follow for leases?",
    ),
)

_TIDEWATER: Final = _Project(
    "tidewater",
    modules=(
        _Module(
            "crates/tide-core",
            "tide-gauge readings, units and the harmonic prediction model",
            "Marta",
            "`cargo test -p tide-core` plus the property tests behind `--features proptest`,"
            " which take about two minutes",
            (
                "Heights are stored in millimetres",
                "`Reading::height` is an `i32` in millimetres above chart datum; converting to"
                " metres as `f32` lost precision in the harmonic fit.",
            ),
        ),
        _Module(
            "crates/tide-fetch",
            "downloading readings from NOAA and the UK Environment Agency",
            "Jonas",
            "`cargo test -p tide-fetch` uses recorded HTTP fixtures in `tests/fixtures/http`;"
            " the live tests run with `--ignored` and need network",
            (
                "NOAA returns times in local standard time",
                "NOAA's `time_zone=lst` answers ignore daylight saving: always request"
                " `time_zone=gmt`. Readings were an hour off every summer until we did.",
            ),
        ),
        _Module(
            "crates/tide-store",
            "the local SQLite cache of readings and stations",
            "Marta",
            "`cargo test -p tide-store` creates temporary databases; set"
            " `TIDE_STORE_KEEP=1` to keep them for inspection",
            (
                "One writer connection",
                "The store has a single writer thread; opening a second writing connection"
                " gave `database is locked` under `tide sync --parallel`.",
            ),
        ),
        _Module(
            "crates/tide-cli",
            "the `tide` command-line interface (clap)",
            "Priya",
            "`cargo test -p tide-cli` runs the `trycmd` snapshot tests in `tests/cmd`;"
            " `TRYCMD=overwrite` rewrites the expected outputs",
            (
                "Exit codes are part of the interface",
                "Scripts depend on `tide`'s exit codes: 0 ok, 2 usage, 3 network, 4 no data."
                " Changing them needs a major version.",
            ),
        ),
        _Module(
            "crates/tide-plot",
            "rendering tide charts to SVG and PNG",
            "Priya",
            "`cargo test -p tide-plot` compares images with a tolerance of 2%;"
            " `cargo insta review` accepts new reference images",
            (
                "Fonts are embedded",
                "Charts embed DejaVu Sans from `assets/fonts`; relying on system fonts made the"
                " reference images differ between macOS and Linux.",
            ),
        ),
        _Module(
            "crates/tide-predict",
            "predicting tides from harmonic constituents",
            "Samuel",
            "`cargo test -p tide-predict --release`: debug builds are too slow for the"
            " year-long prediction tests",
            (
                "Nodal corrections every year",
                "Constituent amplitudes need nodal corrections recomputed for each year;"
                " predictions more than a year from the epoch drifted by 20 cm without it.",
            ),
        ),
        _Module(
            "bindings/python",
            "the Python bindings built with PyO3 and maturin",
            "Samuel",
            "`maturin develop && pytest bindings/python/tests`; CI builds wheels for three"
            " platforms with `cibuildwheel`",
            (
                "Release the GIL around predictions",
                "Long predictions must run inside `py.allow_threads`: holding the GIL froze"
                " Jupyter notebooks for the whole computation.",
            ),
        ),
        _Module(
            "xtask",
            "release automation, changelog and documentation tasks",
            "Jonas",
            "`cargo xtask ci` runs formatting, clippy with `-D warnings`, tests and the docs"
            " build the way CI does",
            (
                "Publish crates in dependency order",
                "`cargo xtask release` publishes tide-core first, then tide-store and"
                " tide-fetch, then the rest; crates.io rejects a crate whose dependency version"
                " is not published yet.",
            ),
        ),
    ),
    settings=(
        ("TIDE_CACHE_DIR", "where the SQLite cache lives; default the platform cache folder"),
        ("TIDE_NOAA_TOKEN", "the API token for NOAA's higher rate limit; optional"),
        ("TIDE_HTTP_TIMEOUT_SECS", "timeout of one download, in seconds; default 30"),
        ("TIDE_MAX_PARALLEL", "downloads run at once by `tide sync --parallel`; default 4"),
        ("TIDE_UNITS", "`metric` or `imperial` for the command's output; default metric"),
        ("TIDE_LOG", "the log filter (tracing's `EnvFilter` syntax); default `warn`"),
        ("TIDE_DATUM", "the vertical datum heights are shown against; default `chart`"),
        ("TIDE_USER_AGENT", "the User-Agent sent to data providers; default `tidewater/<version>`"),
        ("TIDE_STATIONS_FILE", "a TOML file of the stations `tide sync` fetches by default"),
        ("TIDE_NO_COLOR", "any value turns off coloured output, like `NO_COLOR`"),
    ),
    decisions=(
        (
            "SQLite over sled for the cache",
            "The cache is SQLite (rusqlite, bundled) rather than sled: users open it with other"
            " tools, and sled's format was still changing.",
        ),
        (
            "MSRV is the Rust of Debian stable",
            "The minimum supported Rust version follows Debian stable's rustc (1.63 today)"
            " so distributions can package tidewater; `rust-version` in Cargo.toml enforces it.",
        ),
        (
            "Blocking HTTP with ureq",
            "Downloads use `ureq` (blocking) in a thread pool instead of reqwest and tokio: the"
            " CLI does at most a few dozen requests and an async runtime doubled build times.",
        ),
        (
            "Dual licence MIT or Apache-2.0",
            "The crates are dual-licensed MIT OR Apache-2.0, like most of the Rust ecosystem;"
            " a contribution is accepted under both.",
        ),
        (
            "Harmonic constants shipped in the crate",
            "The harmonic constants of the 3,000 NOAA stations are compiled into tide-predict"
            " (`include_bytes!`), 1.2 MB, so predictions work offline.",
        ),
        (
            "Chrono replaced by jiff",
            "Dates and time zones use `jiff` since 0.9; chrono's time-zone handling needed a"
            " second crate and mishandled the UK's historical offsets.",
        ),
        (
            "Errors with thiserror in libraries, anyhow in the CLI",
            "Library crates define error enums with `thiserror`; only tide-cli uses `anyhow`,"
            " so library users can match on errors.",
        ),
    ),
    conventions=(
        (
            "No unwrap outside tests",
            "`clippy::unwrap_used` is denied in library code; use `expect` with a reason where"
            " a panic is truly impossible.",
        ),
        (
            "Changelog fragments",
            "Each pull request adds a fragment in `changelog.d/` (`<number>.<kind>.md`);"
            " `cargo xtask changelog` assembles them at release.",
        ),
        (
            "Station ids are strings",
            "Station identifiers are `StationId(String)`: NOAA's are digits but the UK's are"
            " like `E72639`, so never parse them as numbers.",
        ),
    ),
    questions=(
        ("owner", "crates/tide-plot", "Who should review a change to how charts are drawn?"),
        ("owner", "crates/tide-predict", "Who knows the prediction code best?"),
        (
            "tests",
            "crates/tide-cli",
            "How do I update the expected command outputs after changing a message?",
        ),
        (
            "tests",
            "crates/tide-predict",
            "The prediction tests take forever, am I running them wrong?",
        ),
        (
            "tests",
            "crates/tide-fetch",
            "How do I run the tests that really hit the data providers?",
        ),
        ("pitfall", "crates/tide-fetch", "Readings from NOAA are an hour off in summer"),
        ("pitfall", "crates/tide-store", "I get 'database is locked' when syncing in parallel"),
        ("pitfall", "crates/tide-plot", "The reference images differ on my Mac"),
        ("pitfall", "bindings/python", "Jupyter hangs while a long prediction runs from Python"),
        ("pitfall", "xtask", "crates.io rejected the release because a dependency was missing"),
        ("setting", "TIDE_HTTP_TIMEOUT_SECS", "How long does a download wait before giving up?"),
        ("setting", "TIDE_MAX_PARALLEL", "How many stations are fetched at the same time?"),
        ("setting", "TIDE_UNITS", "Can the tool print heights in feet?"),
        ("decision", "Blocking HTTP with ureq", "Why isn't the downloader async?"),
        (
            "decision",
            "MSRV is the Rust of Debian stable",
            "Which Rust version must the code still compile with?",
        ),
        (
            "decision",
            "Harmonic constants shipped in the crate",
            "Do predictions need an internet connection?",
        ),
        (
            "decision",
            "SQLite over sled for the cache",
            "Why did we pick SQLite for the local cache?",
        ),
        ("convention", "Station ids are strings", "Can I store a station identifier as a u32?"),
        ("convention", "No unwrap outside tests", "Is unwrap allowed in the library crates?"),
    ),
    negatives=(
        "Who maintains the Windows installer?",
        "How do I run the benchmarks for the SQLite cache?",
        "Which NOAA product gives water temperature?",
        "How do we sign the release binaries on macOS?",
        "What is the plan for a WebAssembly build?",
        "Which tide stations in Japan are supported?",
        "How do I add a new chart colour theme?",
        "Who pays for the documentation hosting?",
        "What does the GUI use for its windowing toolkit?",
        "How is the Python package versioned against the crates?",
    ),
)

_HARBOR: Final = _Project(
    "harbor",
    modules=(
        _Module(
            "apps/web",
            "the Next.js customer web app",
            "the Web team",
            "`pnpm --filter web test` runs Vitest; `pnpm --filter web e2e` runs Playwright"
            " against a local API started by `pnpm dev:api`",
            (
                "Server components cannot read the session cookie directly",
                "In `apps/web`, read the session through `getSession()` from `@harbor/auth`;"
                " reading `cookies()` in a cached server component leaked one user's session"
                " into another's page.",
            ),
        ),
        _Module(
            "apps/api",
            "the Fastify HTTP API",
            "the API team",
            "`pnpm --filter api test` needs PostgreSQL and Redis from `docker compose up db"
            " redis`; tests run in transactions rolled back after each",
            (
                "Validate with the shared zod schemas",
                "Route handlers in `apps/api` validate bodies with the zod schemas of"
                " `@harbor/contracts`; hand-written checks drifted from what the web app sent.",
            ),
        ),
        _Module(
            "apps/worker",
            "background jobs on BullMQ",
            "the Platform team",
            "`pnpm --filter worker test` uses an in-memory queue; the Redis-backed tests run"
            " with `REDIS_URL` set",
            (
                "Jobs must be idempotent",
                "BullMQ retries a job whose worker died, so every job handler checks its"
                " `jobKey` in the `processed_jobs` table first; duplicate shipment e-mails went"
                " out before we did.",
            ),
        ),
        _Module(
            "packages/ui",
            "the shared React component library and its Storybook",
            "the Design Systems team",
            "`pnpm --filter ui test` for unit tests and `pnpm --filter ui chromatic` for"
            " visual review of the stories",
            (
                "Icons are imported one by one",
                "Import icons as `@harbor/ui/icons/Anchor`, never from the package root: the"
                " barrel import pulled 400 KB of icons into every page.",
            ),
        ),
        _Module(
            "packages/db",
            "the Prisma schema, migrations and seed data",
            "the API team",
            "`pnpm --filter db test` checks that migrations apply on an empty database and"
            " that `prisma migrate diff` is empty",
            (
                "Never edit an applied migration",
                "A migration that has run in production is never edited: Prisma checks the"
                " migration's checksum, and staging failed to deploy after someone fixed a"
                " typo in one.",
            ),
        ),
        _Module(
            "packages/auth",
            "sessions, OAuth login and role checks",
            "the Security team",
            "`pnpm --filter auth test`; the OAuth flow tests use a mock provider from"
            " `packages/auth/test/mock-oidc.ts`",
            (
                "Roles are checked on the server",
                "Hiding a button is not authorization: every API route declares its role with"
                " `requireRole()`. A hidden admin button's route was callable by any user.",
            ),
        ),
        _Module(
            "packages/contracts",
            "zod schemas and types shared by the web app and the API",
            "the API team",
            "`pnpm --filter contracts test` and `pnpm typecheck` across the workspace, since"
            " a changed schema breaks its users",
            (
                "Add fields as optional first",
                "A new required field in a contract breaks clients still deployed with the old"
                " schema: add it as optional, deploy, then make it required.",
            ),
        ),
        _Module(
            "infra",
            "Terraform for AWS: ECS services, RDS, CloudFront",
            "the Platform team",
            "`terraform validate` and `tflint` run in CI; `terraform plan` against staging runs"
            " on every pull request that touches `infra/`",
            (
                "State locks",
                "Terraform state is in S3 with a DynamoDB lock; a plan interrupted with Ctrl-C"
                " can leave the lock, removed with `terraform force-unlock` after checking no"
                " one else is applying.",
            ),
        ),
        _Module(
            "apps/admin",
            "the internal back-office app (React and Vite)",
            "the Support Tools team",
            "`pnpm --filter admin test`; there are no end-to-end tests, so changes are checked"
            " by hand on staging",
            (
                "The admin app talks to the API with a service token",
                "`apps/admin` calls the API with a service token scoped to support actions;"
                " using an engineer's own token in the environment made actions appear under"
                " their name in the audit log.",
            ),
        ),
        _Module(
            "packages/config",
            "shared ESLint, TypeScript and Prettier configuration",
            "the Web team",
            "`pnpm lint` at the root uses it; a rule change is tested by running `pnpm lint`"
            " across the whole workspace",
            (
                "Path aliases must match tsconfig",
                "Adding a path alias needs it in both `tsconfig.base.json` and the Vite and"
                " Next configs; otherwise type checks pass and the build fails.",
            ),
        ),
    ),
    settings=(
        ("DATABASE_URL", "the PostgreSQL connection string of the API and the worker"),
        ("REDIS_URL", "the Redis used by the job queue and the rate limiter"),
        ("HARBOR_JWT_TTL", "lifetime of an access token, in minutes; default 15"),
        ("HARBOR_UPLOAD_MAX_MB", "largest document upload, in megabytes; default 25"),
        ("HARBOR_RATE_LIMIT_PER_MIN", "API requests per client per minute; default 300"),
        ("NEXT_PUBLIC_API_URL", "the API's base URL as the browser sees it"),
        ("HARBOR_WORKER_CONCURRENCY", "jobs one worker process runs at once; default 8"),
        ("HARBOR_SENTRY_ENV", "the environment name errors are reported under"),
        ("HARBOR_EMAIL_FROM", "the sender address of transactional e-mails"),
        ("HARBOR_FEATURES", "comma-separated features enabled in this environment"),
    ),
    decisions=(
        (
            "pnpm workspaces with Turborepo",
            "The monorepo uses pnpm workspaces and Turborepo for task caching; we moved off"
            " Yarn 1 because its hoisting hid missing dependencies.",
        ),
        (
            "Fastify instead of Express",
            "The API is Fastify: schema-based validation and serialization, and twice"
            " Express's throughput in our load test.",
        ),
        (
            "Prisma for database access",
            "Database access goes through Prisma; raw SQL is allowed only in"
            " `packages/db/sql/` for the reports, with a test for each query.",
        ),
        (
            "ECS Fargate rather than Kubernetes",
            "Services run on ECS Fargate: the team is small and did not want to operate a"
            " Kubernetes cluster.",
        ),
        (
            "Trunk-based development",
            "Everyone merges to `main` behind feature flags at least daily; release branches"
            " exist only for hotfixes.",
        ),
        (
            "Node LTS only",
            "Production runs the active Node LTS (20 today), set in `.nvmrc` and the"
            " Dockerfiles; upgrades happen within a month of a new LTS.",
        ),
    ),
    conventions=(
        (
            "Conventional commits",
            "Commit messages follow Conventional Commits (`feat(api): ...`);"
            " `changesets` builds the release notes from them.",
        ),
        (
            "No default exports",
            "Modules use named exports only; ESLint's `import/no-default-export` enforces it"
            " except in Next.js pages.",
        ),
        (
            "Dates are ISO strings on the wire",
            "API payloads carry dates as ISO 8601 strings in UTC; the web app formats them in"
            " the user's time zone with `date-fns-tz`.",
        ),
    ),
    questions=(
        ("owner", "packages/ui", "Who reviews changes to the shared React components?"),
        ("owner", "apps/admin", "Which team owns the back-office tool used by support?"),
        ("owner", "infra", "Who do I ask before changing the Terraform setup?"),
        ("tests", "apps/api", "What do I need running locally for the API tests to pass?"),
        ("tests", "packages/ui", "How do we do visual review of the component stories?"),
        ("tests", "apps/admin", "Are there end-to-end tests for the back-office app?"),
        ("pitfall", "apps/worker", "Customers received the same shipment e-mail twice"),
        ("pitfall", "packages/db", "Can I fix a typo in a migration that already ran?"),
        ("pitfall", "packages/ui", "Our page bundle grew by hundreds of kilobytes of icons"),
        ("pitfall", "infra", "Terraform says the state is locked after I cancelled a plan"),
        (
            "pitfall",
            "packages/contracts",
            "How do I add a required field to an API contract without breaking clients?",
        ),
        ("pitfall", "packages/auth", "Is hiding the button enough to restrict an admin action?"),
        ("setting", "HARBOR_JWT_TTL", "How long is an access token valid?"),
        ("setting", "HARBOR_WORKER_CONCURRENCY", "How many jobs does each worker process at once?"),
        ("setting", "HARBOR_UPLOAD_MAX_MB", "What's the biggest document a user can upload?"),
        ("decision", "Fastify instead of Express", "Why isn't the API built on Express?"),
        ("decision", "ECS Fargate rather than Kubernetes", "Why don't we run on Kubernetes?"),
        ("decision", "pnpm workspaces with Turborepo", "Why did we leave Yarn?"),
        ("convention", "No default exports", "Should a new module use a default export?"),
        (
            "convention",
            "Dates are ISO strings on the wire",
            "In which format does the API send dates?",
        ),
    ),
    negatives=(
        "Who owns the iOS app?",
        "How do I run the API against a production database snapshot?",
        "Which CDN caches the API responses?",
        "What is the on-call rotation for the weekend?",
        "How do we translate the web app into Spanish?",
        "Which GraphQL client does the web app use?",
        "How long are application logs kept?",
        "What is the process for a security incident?",
        "How do I get a license for the design tool?",
        "Which payment provider do we use for subscriptions?",
    ),
)

PROJECTS: Final[tuple[_Project, ...]] = (_LEDGERLY, _TIDEWATER, _HARBOR)


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())[:48]


def _memories(project: _Project) -> list[Memory]:
    name = project.name
    found: list[Memory] = []
    for module in project.modules:
        slug = _slug(module.path)
        found.append(
            Memory(
                f"{name}/owner/{slug}",
                name,
                "owner",
                f"{module.path} is owned by {module.owner}",
                f"`{module.path}` ({module.purpose}) is owned by {module.owner}: changes there"
                f" need a review from {module.owner}.",
            )
        )
        found.append(
            Memory(
                f"{name}/tests/{slug}",
                name,
                "tests",
                f"Running the tests of {module.path}",
                f"Tests of `{module.path}`: {module.tests}.",
            )
        )
        title, text = module.pitfall
        found.append(Memory(f"{name}/pitfall/{slug}", name, "pitfall", title, text))
        found.append(
            Memory(
                f"{name}/map/{slug}",
                name,
                "map",
                f"What {module.path} holds",
                f"`{module.path}` holds {module.purpose}.",
            )
        )
    for variable, meaning in project.settings:
        found.append(
            Memory(
                f"{name}/setting/{_slug(variable)}",
                name,
                "setting",
                f"Environment variable {variable}",
                f"`{variable}`: {meaning}.",
            )
        )
    for kind, table in (("decision", project.decisions), ("convention", project.conventions)):
        for title, text in table:
            found.append(Memory(f"{name}/{kind}/{_slug(title)}", name, kind, title, text))
    return found


def _key(project: str, category: str, about: str) -> str:
    kind = "decision" if category == "decision" else category
    return f"{project}/{kind}/{_slug(about)}"


def build() -> RepoSet:
    """Every project's memories, then every question."""
    memories: list[Memory] = []
    questions: list[Question] = []
    for project in PROJECTS:
        mine = _memories(project)
        keys = {memory.key for memory in mine}
        memories.extend(mine)
        for number, (category, about, text) in enumerate(project.questions, start=1):
            expected = _key(project.name, category, about)
            if expected not in keys:
                raise ValueError(f"{project.name} question {number}: no memory {expected}")
            questions.append(
                Question(f"{project.name}/q{number}", project.name, text, (expected,), category)
            )
        for number, text in enumerate(project.negatives, start=1):
            questions.append(
                Question(f"{project.name}/n{number}", project.name, text, (), "negative")
            )
    if len({m.key for m in memories}) != len(memories):
        raise ValueError("duplicate memory key")
    return RepoSet(tuple(memories), tuple(questions))


def _summary(built: RepoSet) -> str:
    lines = []
    for project in PROJECTS:
        count = sum(1 for m in built.memories if m.project == project.name)
        asked = Counter(q.category for q in built.questions if q.project == project.name)
        lines.append(f"{project.name}: {count} memories; questions {dict(asked)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(_summary(build()))
