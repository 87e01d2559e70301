"""The credential detector: every format found, benign look-alikes left alone, invisible
characters seen through, redaction exact and complete."""

from __future__ import annotations

import ast
import base64
import dataclasses
import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.safety.rules import ANY_RULE, RULES, SHORTEST, Rule, _any_of
from engram.safety.secrets import (
    KINDS,
    Finding,
    contains_secret,
    find_secrets,
    redact,
    strip_invisible,
)

from .samples import (
    ALNUM,
    BASE58,
    BASE64,
    BASE64URL,
    DIGITS,
    HEX,
    UPPER_DIGITS,
    age_secret_key,
    aws_access_key_id,
    azure_connection_string,
    bitcoin_address,
    digest,
    discord_bot_token,
    discord_webhook,
    fake,
    github_token,
    ipfs_cid_v0,
    jwt,
    ksuid,
    pem,
    record_id,
    slack_bot_token,
    telegram_bot_token,
)

SAFETY = Path(__file__).resolve().parents[2] / "src" / "engram" / "safety"

AKIA = aws_access_key_id()
ASIA = aws_access_key_id("ASIA")
GHP = github_token()
AWS_SECRET = fake(BASE64, 40)
PASSWORD = "Tr0ub4dor&3x"
SHELL_PASSWORD = "Tr0ub4dor_3x"  # the shell would take ``&`` for a command's end
OPAQUE = fake(ALNUM, 40)
AWS_SLASHED = "Xq7kP9vLm2Rt8wYz4Nc6Bd1Hf3Jg5Ks0Aa9Zu2Qe"
TOKEN = fake(ALNUM, 30) + "7"
HEX40 = fake(HEX, 40)
BASIC = base64.b64encode(b"deploy:Tr0ub4dor&3").decode()
GITLAB = f"glpat-{fake(ALNUM, 20)}"
SLACK_USER = f"xoxp-{fake(DIGITS, 11)}-{fake(DIGITS, 12)}-{fake(DIGITS, 13)}-{fake(HEX, 32)}"
SLACK_APP = f"xapp-1-A{fake(UPPER_DIGITS, 10)}-{fake(DIGITS, 13)}-{fake(HEX, 64)}"
SLACK_WEBHOOK = (
    f"https://hooks.slack.com/services/T{fake(UPPER_DIGITS, 8)}/B{fake(UPPER_DIGITS, 10)}"
    f"/{fake(ALNUM, 24)}"
)
STRIPE = {prefix: prefix + fake(ALNUM, 24) for prefix in ("sk_live_", "rk_live_", "sk_test_")}
WHSEC = f"whsec_{fake(ALNUM, 32)}"
GOOGLE = f"AIza{fake(BASE64URL, 35)}"
GOOGLE_OAUTH = f"GOCSPX-{fake(BASE64URL, 28)}"
OPENAI = f"sk-{fake(ALNUM, 48)}"
OPENAI_PROJECT = f"sk-proj-{fake(BASE64URL, 156)}"
ANTHROPIC = f"sk-ant-api03-{fake(BASE64URL, 93)}AA"
NPM = f"npm_{fake(ALNUM, 36)}"
PYPI = f"pypi-AgEIcHlwaS5vcmc{fake(BASE64URL, 70)}"
HUGGINGFACE = f"hf_{fake(ALNUM[:52], 34)}"
DIGITALOCEAN = {prefix: prefix + fake(HEX, 64) for prefix in ("dop_v1_", "doo_v1_", "dor_v1_")}
SHOPIFY = {prefix: prefix + fake(HEX, 32) for prefix in ("shpat_", "shpca_", "shppa_", "shpss_")}
SENDGRID = f"SG.{fake(BASE64URL, 22)}.{fake(BASE64URL, 43)}"
DJANGO = f"django-insecure-{fake(ALNUM, 40)}"
RSA_KEY = pem("RSA PRIVATE KEY")
ENCRYPTED_KEY = pem(
    "RSA PRIVATE KEY", headers=f"Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{fake(HEX, 32)}\n"
)
JSON_ESCAPED_KEY = pem("PRIVATE KEY", newline="\\n")
PUTTY_PRIVATE = f"Private-Lines: 1\n{fake(BASE64, 64)}"
COOKIE = f"sessionid={fake(ALNUM, 32)}; theme=dark"
AGE = age_secret_key()
DISCORD_WEBHOOK = discord_webhook()
DISCORD_BOT = discord_bot_token()
TELEGRAM = telegram_bot_token()
MAILGUN = "key-" + fake(HEX, 32, 1)
MAILGUN_SIGNING = f"{fake(HEX, 32, 2)}-{fake(HEX, 8, 2)}-{fake(HEX, 8, 3)}"
AZURE, AZURE_KEY = azure_connection_string()
HEX32 = fake(HEX, 32, 4)
PROSE_PASSWORD = "Tundra4417.maple"

#: (kind, text, the secret it holds): every format, in the forms it is written in.
FOUND: list[tuple[str, str, str]] = [
    ("aws_access_key_id", f"export AWS_ACCESS_KEY_ID={AKIA}", AKIA),
    ("aws_access_key_id", f"temporary key {ASIA} expires", ASIA),
    ("aws_secret_access_key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws_secret_access_key", f'{{"SecretAccessKey": "{AWS_SECRET}"}}', AWS_SECRET),
    *[
        ("github_token", f"GITHUB_TOKEN={github_token(p)}", github_token(p))
        for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")
    ],
    ("gitlab_token", f"use {GITLAB} for the API", GITLAB),
    ("slack_token", f"bot: {slack_bot_token()}", slack_bot_token()),
    ("slack_token", f"{SLACK_USER} was it", SLACK_USER),
    ("slack_token", SLACK_APP, SLACK_APP),
    ("slack_webhook_url", f"post to {SLACK_WEBHOOK} on failure", SLACK_WEBHOOK),
    *[("stripe_key", f"stripe {key} here", key) for key in STRIPE.values()],
    ("stripe_key", f"webhook {WHSEC}", WHSEC),
    ("google_api_key", f"?key={GOOGLE}&v=3", GOOGLE),
    ("google_oauth_client_secret", GOOGLE_OAUTH, GOOGLE_OAUTH),
    ("openai_key", f"OpenAI key {OPENAI}", OPENAI),
    ("openai_key", OPENAI_PROJECT, OPENAI_PROJECT),
    ("anthropic_key", f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("npm_token", f"//registry.npmjs.org/:_authToken={NPM}", NPM),
    ("pypi_token", f"password = {PYPI}", PYPI),
    ("huggingface_token", f"HF {HUGGINGFACE}", HUGGINGFACE),
    *[("digitalocean_token", f"doctl auth init -t {key}", key) for key in DIGITALOCEAN.values()],
    *[("shopify_token", f"X-Shopify-Access-Token: {key}", key) for key in SHOPIFY.values()],
    ("generic_api_key_assignment", f"UPSTREAM_CREDENTIAL={HEX40}\n", HEX40),
    ("generic_api_key_assignment", f'{{"credentials": "{TOKEN}"}}', TOKEN),
    ("sendgrid_key", SENDGRID, SENDGRID),
    ("jwt", f"Authorization: Bearer {jwt()}", jwt()),
    ("private_key_block", f"key:\n{RSA_KEY}\nend", RSA_KEY),
    ("private_key_block", pem("OPENSSH PRIVATE KEY"), pem("OPENSSH PRIVATE KEY")),
    ("private_key_block", pem("EC PRIVATE KEY"), pem("EC PRIVATE KEY")),
    ("private_key_block", pem("PGP PRIVATE KEY BLOCK"), pem("PGP PRIVATE KEY BLOCK")),
    ("private_key_block", ENCRYPTED_KEY, ENCRYPTED_KEY),
    ("private_key_block", f'{{"private_key": "{JSON_ESCAPED_KEY}\\n"}}', JSON_ESCAPED_KEY),
    ("putty_private_key", f"Public-Lines: 0\n{PUTTY_PRIVATE}\nPrivate-MAC: 00", PUTTY_PRIVATE),
    ("password_assignment", f"password={PASSWORD}", PASSWORD),
    ("password_assignment", f"passwd: {PASSWORD}", PASSWORD),
    ("password_assignment", f"pwd = '{PASSWORD}'", PASSWORD),
    ("password_assignment", f'{{"password": "{PASSWORD}", "user": "ada"}}', PASSWORD),
    ("password_assignment", "DB_PASSWORD=supersecret\n", "supersecret"),
    ("password_assignment", "database:\n  password: hunter22\n", "hunter22"),
    ("password_assignment", f"mysqldump --password {PASSWORD} app", PASSWORD),
    ("password_assignment", f'    password: str = "{PASSWORD}"', PASSWORD),
    ("password_assignment", f"Server=db;User Id=app;Password={PASSWORD};", PASSWORD),
    ("secret_assignment", f'SECRET_KEY = "{DJANGO}"', DJANGO),
    ("secret_assignment", f'client_secret: "{TOKEN}"', TOKEN),
    ("generic_api_key_assignment", f"API_KEY={TOKEN}", TOKEN),
    ("generic_api_key_assignment", f'{{"apiKey": "{HEX40}"}}', HEX40),
    ("generic_api_key_assignment", f"token: {HEX40}", HEX40),
    ("generic_api_key_assignment", f"ACCESS_TOKEN={TOKEN}\n", TOKEN),
    ("connection_string", f"postgres://app:{PASSWORD}@db.internal:5432/app", PASSWORD),
    ("connection_string", f"postgresql://app:{PASSWORD}@db/app?sslmode=require", PASSWORD),
    ("connection_string", f"mysql://root:{PASSWORD}@127.0.0.1/shop", PASSWORD),
    ("connection_string", f"mongodb+srv://ada:{PASSWORD}@cluster0.example.net/", PASSWORD),
    ("connection_string", f"REDIS_URL=redis://:{PASSWORD}@cache:6379/0", PASSWORD),
    ("connection_string", f"amqp://guest:{PASSWORD}@rabbit:5672/", PASSWORD),
    ("connection_string", "postgres://app:p@ss#w0rd@db/app", "p@ss#w0rd"),
    ("connection_string", "postgres://app:%24ecr3t%40pw@db/app", "%24ecr3t%40pw"),
    ("connection_string", "https://ci:Tr0ub4dor%263x@git.internal/repo.git", "Tr0ub4dor%263x"),
    *[
        ("command_line_password", command.format(SHELL_PASSWORD), SHELL_PASSWORD)
        for command in (
            "mysql -h db -u root -p{} shop",
            "mysqldump -uroot -p'{}' --all-databases",
            "sshpass -p {} ssh deploy@web1",
            "sshpass -p'{}' scp build.tar host:",
            "docker login -u ci -p {} registry.internal",
            "mongosh --host db -u admin -p {} --authenticationDatabase admin",
            "curl -u deploy:{} https://ci.internal/api",
            'curl --user "deploy:{}" -X POST https://x',
            "http -a ada:{} GET https://api.internal/me",
            "smbclient //files/share -U ada%{}",
            "openssl pkcs12 -export -passout pass:{} -out k.p12",
            "ldapsearch -x -D cn=admin,dc=corp -w {} -b dc=corp",
            "redis-cli -h cache -a {} ping",
            "zip -P {} backup.zip db.sql",
            "7z a -p{} backup.7z db.sql",
            "htpasswd -bc /etc/nginx/.htpasswd admin {}",
            "sqlcmd -S db -U sa -P {} -Q 'SELECT 1'",
            "ssh-keygen -t ed25519 -N {} -f id_deploy",
            "keytool -list -keystore k.jks -storepass {}",
            "lftp -u ada,{} sftp://files.internal",
        )
    ],
    # A literal that starts with a sign a reference or template opens with (issue 26).
    *[
        (kind, text.format(value), value)
        for value in ("$ecret9Xq", "*h5dULRs0z2mPvCS", "!BayhyeA2n78H8!S", "#Qw8erty2zX")
        for kind, text in (
            ("password_assignment", "DB_PASSWORD={}\n"),
            ("password_assignment", "database:\n  password: '{}'\n"),
            ("password_assignment", '{{"password": "{}"}}'),
            ("connection_string", "postgres://app:{}@db.internal:5432/app"),
            ("command_line_password", "mysql -h db -u root -p{} shop"),
            ("command_line_password", "curl -u deploy:{} https://ci.internal/api"),
            ("command_line_password", "sshpass -p '{}' ssh deploy@web1"),
            ("command_line_password", "redis-cli -h cache -a '{}' ping"),
        )
    ],
    ("connection_string", "postgres://app:%Qw8erty2zX@db/app", "%Qw8erty2zX"),
    ("command_line_password", "mysql -u root -p-Xk29dLq0 shop", "-Xk29dLq0"),
    ("command_line_password", "sshpass -p -Xk29dLq0 ssh deploy@web1", "-Xk29dLq0"),
    ("command_line_password", "curl -u deploy:-Xk29dLq0 https://ci", "-Xk29dLq0"),
    ("password_assignment", f"PGPASSWORD={PASSWORD} psql -h db -U app", PASSWORD),
    ("password_assignment", f"SSHPASS={PASSWORD} sshpass -e ssh deploy@web1", PASSWORD),
    ("password_assignment", f"MYSQL_PWD={PASSWORD} mysql -u root", PASSWORD),
    ("password_assignment", f"REDISCLI_AUTH={PASSWORD} redis-cli", PASSWORD),
    ("bearer_token", f'curl -H "Authorization: Bearer {OPAQUE}" https://api', OPAQUE),
    ("bearer_token", f"Authorization: Token {HEX40}", HEX40),
    ("basic_auth", f"Authorization: Basic {BASIC}", BASIC),
    ("cookie", f"Cookie: {COOKIE}", COOKIE),
    ("high_entropy_string", f"the signing salt is {OPAQUE}.", OPAQUE),
    # A base64 secret that opens with a slash is not a path (issue 26).
    ("high_entropy_string", f"the signing key is /{AWS_SLASHED} here", f"/{AWS_SLASHED}"),
    ("high_entropy_string", f"see ./{AWS_SLASHED}", f"/{AWS_SLASHED}"),
    ("high_entropy_string", f"blob /{OPAQUE}/TE ok", f"/{OPAQUE}/TE"),
    ("secret_assignment", f"client_secret: {OPAQUE}", OPAQUE),
    # Formats and forms of issue 26's third round.
    ("age_secret_key", f"# created: 2026-01-05\n{AGE}\n", AGE),
    ("discord_webhook_url", f"notify {DISCORD_WEBHOOK} on deploy", DISCORD_WEBHOOK),
    ("discord_bot_token", f"client.run('{DISCORD_BOT}')", DISCORD_BOT),
    ("telegram_bot_token", f"the bot answers as {TELEGRAM} now", TELEGRAM.split(":")[1]),
    ("mailgun_key", f"MAILGUN {MAILGUN} ok", MAILGUN),
    ("mailgun_key", f"signing {MAILGUN_SIGNING}.", MAILGUN_SIGNING),
    ("azure_key", AZURE, AZURE_KEY),
    (
        "azure_key",
        f"Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKey={AWS_SECRET};",
        AWS_SECRET,
    ),
    ("vendor_hex_key", f"Datadog API key for the staging agent: {HEX32}", HEX32),
    ("vendor_hex_key", f"# Twilio\nauth {HEX32}", HEX32),
    ("vendor_hex_key", f"DD_APP_KEY={HEX40}", HEX40),
    ("password_assignment", f"pw: {PASSWORD}", PASSWORD),
    ("password_assignment", f"ADMIN_PW={PASSWORD}", PASSWORD),
    ("password_assignment", f"`DB_PASSWORD`: `{PASSWORD}`", PASSWORD),
    ("generic_api_key_assignment", f'{{"accountKey": "{TOKEN}"}}', TOKEN),
    ("password_in_prose", f"the staging password is {PROSE_PASSWORD}", PROSE_PASSWORD),
    ("password_in_prose", "The password for the db was changed to `Xk9q2LmA`.", "Xk9q2LmA"),
    ("password_in_prose", "log in with ops / Hx93!kq2z.", "Hx93!kq2z"),
    ("password_in_prose", "Credentials: admin / Falcon2041_maple", "Falcon2041_maple"),
]


@pytest.mark.parametrize(
    ("kind", "text", "secret"), FOUND, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(FOUND)]
)
def test_every_format_is_found_with_its_kind_and_exact_span(
    kind: str, text: str, secret: str
) -> None:
    start = text.index(secret)
    assert find_secrets(text) == [Finding(kind, start, start + len(secret))]


def test_every_kind_has_a_sample() -> None:
    assert {kind for kind, _, _ in FOUND} == set(KINDS)


NOT_SECRETS: list[str] = [
    "We decided to keep the lexical channel and drop the semantic one for now.",
    "The password must be at least 12 characters; rotate it every 90 days.",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    f"fixed in commit {fake(HEX, 40)} on main",
    f'{{"content_digest": "{digest()}", "record_id": "{record_id()}"}}',
    f"record_id: {record_id(1)}\nrecord_digest: {digest(1)}",
    "https://github.com/encode/httpx/blob/master/httpx/_exceptions.py#L20",
    "https://example.com/search?q=engram&page=2&sort=desc",
    "/home/alice/Projects/Engram2/src/engram/safety/secrets.py",
    "password = get_password()",
    "password: str",
    "def login(user: str, password: str | None = None) -> Session:",
    'password = os.environ["DB_PASSWORD"]',
    "api_key = settings.OPENAI_API_KEY",
    'token = request.headers.get("Authorization")',
    'headers = {"Authorization": f"Bearer {token}"}',
    "private_key: PKCS7PrivateKeyTypes,",
    "password: <your-password>",
    "API_KEY=your_api_key_here",
    "DB_PASSWORD=${DB_PASSWORD}",
    'token: "****************"',
    "ghp_" + "x" * 36,
    "sk_live_" + "x" * 24,
    "AKIAIOSFODNN7EXAMPLE",
    "postgres://user:password@localhost:5432/app",
    "postgres://app:${PGPASSWORD}@db/app",
    "git@github.com:encode/httpx.git and ssh://git@github.com/encode/httpx",
    "test_forget_removes_record_from_search_immediately",
    "AbstractSingletonProxyFactoryBean HTTP_2_SETTINGS_MAX_FRAME_SIZE",
    "integrity sha512-" + fake(BASE64, 86) + "==",
    "Visual Basic Compiler and the Basic Multilingual Plane",
    "Keys start with -----BEGIN OPENSSH PRIVATE KEY----- and must never be committed.",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    pem("CERTIFICATE"),
    f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{fake(BASE64, 43)} ada@laptop",
    "Set-Cookie: theme=dark; Path=/; HttpOnly",
    "the bearer of this letter",
    "python -m pip install --password-file secrets.txt",
    "mysql -u root -p shop",
    'mysql -u root -p"$MYSQL_ROOT_PASSWORD" shop',
    "docker run -p 8080:80 -u 1000:1000 nginx",
    'curl -u "$CI_USER:$CI_TOKEN" https://ci.internal',
    "sshpass -f ~/.pw ssh deploy@web1",
    "openssl rsa -passin env:KEY_PASS -in key.pem",
    "unrar x -p- archive.rar",
    "Paste the -----BEGIN RSA PRIVATE KEY----- block, then the lines after it, into the vault;"
    " never commit it to the repository or any ticket.",
    "Incoming webhooks post to https://hooks.slack.com/services/ followed by the workspace id,"
    " the channel id and the secret part.",
    # Paths whose segments read as names, one random segment among them at most (issue 26).
    "/var/lib/docker/overlay2/3fA9kQz7Lm2Xc8Rt5Wb1Yd6/merged",
    "CFLAGS=-isysroot /Developer/SDKs/MacOSX10.4u.sdk and Id: /hostedzone/Z3P5QSUBK4POTI",
    "s3://omics-artifacts-01d6xmpl4e72dd32/NA12878.cram",
    "letters = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p']",
    "HEX_DIGITS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'A', 'B', 'C', 'D', 'E', 'F']",
    "dop_v1_" + "0" * 64 + " and shpat_" + "a" * 32 + " are placeholders",
    "credentials = get_credentials()\ncredential: default\ncredentials_file = ~/.aws/credentials",
    "Authorization: AWS4-HMAC-SHA256 Credential=mock_access_key/20220524/us-east-1/s3/aws4_request",
    # References and templates, whatever sign opens them (issue 26).
    "DB_PASSWORD=$DB_PASSWORD\nAPI_TOKEN=$(vault read -field=token kv/ci)",
    "password: %(db_password)s and PASSWORD=%DB_PASSWORD%",
    "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
    'password: "{{ vault_db_password }}" and password = "#{db_password}"',
    "REDIS_PASSWORD=$PASSWORD1 and password: ********",
    "mysql -u root -p -h db.internal shop",
    "sshpass -p --help",
    "curl -u deploy:$CI_TOKEN https://ci.internal",
    "postgres://app:%7BPGPASSWORD%7D@db/app",
    "pk_live_" + fake(ALNUM, 99, 3),
    "phc_" + fake(ALNUM, 43, 3),
    f"send to {bitcoin_address(0, 1)} or {bitcoin_address(5, 2)}",
    f"pinned as {ipfs_cid_v0(1)} on the gateway",
    "ED25519 key fingerprint is SHA256:" + fake(BASE64, 43, 3) + ".",
    "golang.org/x/text v0.14.0 h1:" + fake(BASE64, 43, 3) + "=",
    '<img src="data:image/png;base64,iVBORw0KGgo' + fake(BASE64, 60, 3) + '">',
    "wallet address " + fake(BASE58, 44, 3),
    'msg = "Deploy " + "finished in " + str(seconds) + "s"',
    "<p>Tom &amp; Jerry &#8212; &lt;b&gt;bold&lt;/b&gt;</p>",
    'C:\\Users\\ada\\x64\\bin\\app.exe and printf("\\x1b[31merror\\x1b[0m")',
    "jwt.io's example token: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkw"
    "IiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    # Base64 of ordinary text (fixtures, a CSV, markup): a random key decodes to bytes.
    'FIXTURE = "' + base64.b64encode(b"The quick brown fox jumps over the lazy dog").decode() + '"',
    "csv = " + base64.b64encode(b"name,email\nbob,bob@example.com\n").decode(),
    "body: " + base64.urlsafe_b64encode(b"<xml><item>1</item><item>2</item></xml>").decode(),
    # The ids of a request or a trace, named as such in a log line.
    "X-Amz-Cf-Id: " + fake(BASE64, 54, 3) + "==",
    "GET /orders 200 request_id=" + fake(BASE64, 32, 4) + " 12ms",
    "traceparent: " + fake(BASE64, 40, 5),
    # Public identifiers of issue 26's third round: by structure or by label.
    f"refund ch_{fake(ALNUM, 24, 8)} of cus_{fake(ALNUM, 14, 8)} (pi_{fake(ALNUM, 24, 9)})",
    f"event evt_{fake(ALNUM, 24, 10)} settled txn_{fake(ALNUM, 24, 11)}",
    f'<div class="g-recaptcha" data-sitekey="6Le{fake(BASE64URL, 37, 12)}"></div>',
    f"grecaptcha.execute('6Lc{fake(BASE64URL, 37, 13)}', {{action: 'login'}})",
    f'analytics.load("{fake(ALNUM, 32, 14)}")',
    f'AnalyticsBrowser.load({{ writeKey: "{fake(ALNUM, 32, 15)}" }})',
    f"[Peer]\nPublicKey = {fake(BASE64, 43, 16)}=\nAllowedIPs = 10.0.0.2/32",
    f'{{"kty": "RSA", "e": "AQAB", "n": "{fake(BASE64URL, 342, 17)}"}}',
    f'{{"kty": "EC", "crv": "P-256", "x": "{fake(BASE64URL, 43, 18)}",'
    f' "y": "{fake(BASE64URL, 43, 19)}"}}',
    f"order {ksuid(1_700_000_000, 1)} shipped, then {ksuid(1_790_000_000, 2)}",
    f"mapboxgl.accessToken = 'pk.eyJ1IjoiYWRhIiwiYSI6Im{fake(ALNUM, 20, 20)}In0."
    f"{fake(BASE64URL, 22, 21)}';",
    f'{{"VersionId": "{fake(ALNUM + "._", 32, 22)}", "IsLatest": true}}',
    f"12:00:01 INFO req={fake(ALNUM, 26, 23)} GET /v1/items 200",
    f"x-amzn-RequestId: {fake(ALNUM, 30, 24)}",
    "The password hashing algorithm is argon2id; passwords are hashed with bcrypt12.",
    "The password is SHA-256 hashed and the password is required.",
    "log in with GitHub / Google, then the password is shown once",
    f"Bump the Datadog agent to 7.50 (commit {HEX40})",
]


@pytest.mark.parametrize(
    "text",
    [
        # Base64 of bytes, not of text: the entropy fallback still sees it.
        "blob " + base64.b64encode(bytes(range(7, 40))).decode(),
        # Base64 of text that holds a credential.
        "blob " + base64.b64encode(("the key " + fake(BASE64, 32, 6) + " ok").encode()).decode(),
        # A vendor token is one whatever a log line calls it.
        "request_id=ghp_" + fake(ALNUM, 36, 7),
    ],
    ids=["bytes", "text holding a key", "vendor token as a request id"],
)
def test_what_the_public_run_exemptions_do_not_cover_is_still_found(text: str) -> None:
    from engram.safety.disguise import contains_disguised_secret

    assert contains_disguised_secret([text])


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_benign_text_is_not_flagged(text: str) -> None:
    assert find_secrets(text) == []


# --- Invisible characters ----------------------------------------------------------------


@pytest.mark.parametrize(
    "invisible", ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u202e", "\u2066", "\U000e0041"]
)
def test_a_token_split_by_an_invisible_character_is_still_found(invisible: str) -> None:
    text = f"token {GHP[:10]}{invisible}{GHP[10:]}"
    assert find_secrets(text) == [Finding("github_token", 6, 46)]


def test_offsets_refer_to_the_text_without_invisible_characters() -> None:
    text = f"\u200bkey \u200d{AKIA[:4]}\ufe0f{AKIA[4:]}"
    assert strip_invisible(text) == f"key {AKIA}"
    assert find_secrets(text) == [Finding("aws_access_key_id", 4, 24)]


def test_redaction_removes_the_invisible_characters_inside_a_secret_and_keeps_the_rest() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    text = f"{family} key {AKIA[:4]}\u200b{AKIA[4:]} \u00adok"
    assert redact(text) == f"{family} key [REDACTED:aws_access_key_id] \u00adok"


@given(st.text())
def test_stripping_invisible_characters_never_changes_the_verdict(text: str) -> None:
    assert contains_secret(strip_invisible(text)) == contains_secret(text)


# --- Redaction ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"DB_PASSWORD={PASSWORD}\n", "DB_PASSWORD=[REDACTED:password_assignment]\n"),
        (
            f'{{"password": "{PASSWORD}", "user": "ada"}}',
            '{"password": "[REDACTED:password_assignment]", "user": "ada"}',
        ),
        (
            f"postgres://app:{PASSWORD}@db:5432/app",
            "postgres://app:[REDACTED:connection_string]@db:5432/app",
        ),
        (
            f"Authorization: Bearer {OPAQUE}\nAccept: */*",
            "Authorization: Bearer [REDACTED:bearer_token]\nAccept: */*",
        ),
        (f"before\n{RSA_KEY}\nafter", "before\n[REDACTED:private_key_block]\nafter"),
        (
            f"use {GHP} and {AKIA}",
            "use [REDACTED:github_token] and [REDACTED:aws_access_key_id]",
        ),
    ],
)
def test_redaction_replaces_exactly_the_secret(text: str, redacted: str) -> None:
    assert redact(text) == redacted


def test_redaction_uses_the_given_placeholder() -> None:
    assert redact(f"token {GHP}", lambda kind: f"<{kind.upper()}>") == "token <GITHUB_TOKEN>"


def test_text_without_secrets_comes_back_unchanged() -> None:
    text = f"record {record_id()} has digest {digest()} \u200b"
    assert redact(text) == text


def test_a_value_found_once_is_redacted_wherever_else_it_appears() -> None:
    text = f"DB_PASSWORD={PASSWORD}\nthen log in with {PASSWORD} as admin"
    assert find_secrets(text) == [
        Finding("password_assignment", 12, 24),
        Finding("password_assignment", 42, 54),
    ]
    assert redact(text) == (
        "DB_PASSWORD=[REDACTED:password_assignment]\n"
        "then log in with [REDACTED:password_assignment] as admin"
    )


def test_overlapping_rules_yield_one_finding_named_after_the_most_specific() -> None:
    text = f'GITHUB_TOKEN="{GHP}" and https://x-access-token:{GHP}@github.com/o/r'
    assert find_secrets(text) == [Finding("github_token", 14, 54), Finding("github_token", 83, 123)]


def test_a_finding_holds_the_kind_and_offsets_but_never_the_secret() -> None:
    [finding] = find_secrets(f"key {AKIA}")
    assert [field.name for field in dataclasses.fields(Finding)] == ["kind", "start", "end"]
    assert AKIA not in repr(finding)


def test_redacted_text_has_nothing_left_to_find() -> None:
    text = "\n".join(text for _, text, _ in FOUND)
    assert find_secrets(redact(text)) == []


# --- Laws --------------------------------------------------------------------------------

FRAGMENTS = [text for _, text, _ in FOUND] + NOT_SECRETS + [" ", "\n", "\u200b", "\u00ad", "="]
MIXED = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=8).map("".join)


@given(st.text())
def test_find_secrets_never_raises_and_returns_sorted_disjoint_findings(text: str) -> None:
    findings = find_secrets(text)
    visible_length = len(strip_invisible(text))
    ends = [0] + [finding.end for finding in findings]
    for previous_end, finding in zip(ends, findings, strict=False):
        assert previous_end <= finding.start < finding.end <= visible_length
        assert finding.kind in KINDS


@settings(max_examples=300)
@given(MIXED)
def test_redacted_text_never_contains_a_detected_secret(text: str) -> None:
    visible = strip_invisible(text)
    secrets = [visible[finding.start : finding.end] for finding in find_secrets(text)]
    redacted = redact(text)
    for secret in secrets:
        assert secret not in redacted
        assert secret not in strip_invisible(redacted)


@settings(max_examples=300)
@given(MIXED)
def test_contains_secret_agrees_with_find_secrets(text: str) -> None:
    assert contains_secret(text) == bool(find_secrets(text))


@settings(max_examples=300)
@given(MIXED)
def test_text_with_no_finding_is_its_own_redaction(text: str) -> None:
    if not find_secrets(text):
        assert redact(text) == text


@given(st.binary(min_size=32, max_size=32))
def test_engram_record_ids_and_digests_are_never_secrets(raw: bytes) -> None:
    record = "mem_" + base64.b32encode(raw).decode().lower().rstrip("=")
    sha = "sha256:" + hashlib.sha256(raw).hexdigest()
    text = f'{{"record_id": "{record}", "record_digest": "{sha}"}} see {record} ({sha})'
    assert find_secrets(text) == []


# --- Cost --------------------------------------------------------------------------------

MEGABYTE = 1 << 20


def _megabyte_of(unit: str) -> str:
    return (unit * (MEGABYTE // len(unit) + 1))[:MEGABYTE]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "unit",
    [
        "a",
        " ",
        "AKIA",
        "ghp_",
        "eyJ",
        "eyJaaaa.",
        "-----BEGIN RSA PRIVATE KEY-----\n",
        "a://",
        "a://b:c",
        "Bearer ",
        "Basic ",
        "Cookie: a=",
        "pwd: x",
        "--password -",
        "secret_key:",
        "Ab1-",
        "漢字\u200b",
    ],
)
def test_a_megabyte_of_adversarial_text_is_scanned_without_blowing_up(unit: str) -> None:
    # A bound, not a benchmark (bench/secrets.py measures): catastrophic backtracking
    # would take hours here, a linear scan takes well under a second.
    assert find_secrets(_megabyte_of(unit)) == []


@pytest.mark.timeout(120)
def test_a_megabyte_full_of_secrets_finds_every_one() -> None:
    tokens = [github_token(seed=seed) for seed in range(MEGABYTE // 41)]
    assert len(find_secrets(" ".join(tokens))) == len(tokens)


# --- Layering ----------------------------------------------------------------------------

LIGHT = {"__future__", "re", "math", "collections", "collections.abc", "dataclasses", "typing"}
#: What the disguise check decodes and folds with (built into the interpreter or tiny).
LIGHT |= {"base64", "binascii", "unicodedata"}
#: What checks a Bitcoin address's checksum (imported only for a base58 candidate).
LIGHT |= {"hashlib"}
#: What decodes HTML character references (imported only for text holding ``&…;``).
LIGHT |= {"html"}


@pytest.mark.parametrize("path", sorted(SAFETY.glob("*.py")), ids=lambda path: path.name)
def test_the_detector_imports_only_light_standard_modules(path: Path) -> None:
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert {name for name in imported if not name.startswith("engram.")} <= LIGHT


def test_each_rule_knows_the_fewest_characters_it_can_match() -> None:
    from engram.safety.rules import RULES

    shortest = {rule.kind: rule.shortest for rule in RULES}
    assert shortest["password_assignment"] == len("pw=x")
    assert shortest["aws_access_key_id"] == len("AKIA") + 16
    assert min(rule.shortest for rule in RULES) == 4


@settings(max_examples=300)
@given(st.text(alphabet="pwdasecrtkyPWD=:;'\" _-xA1/", max_size=12))
def test_skipping_short_text_loses_no_span(text: str) -> None:
    from engram.safety.rules import PUBLISHED_EXAMPLES, RULES

    for rule in RULES:
        unskipped = [
            span
            for match in rule.pattern.finditer(text)
            if (span := rule.locate(match)) is not None
            and text[span[0] : span[1]] not in PUBLISHED_EXAMPLES
        ]
        assert list(rule.spans(text)) == unskipped


@settings(max_examples=500)
@given(MIXED)
def test_the_union_of_the_rules_matches_exactly_where_some_rule_matches(text: str) -> None:
    some_rule = any(rule.pattern.search(text) for rule in RULES)
    assert (ANY_RULE.search(text) is not None) == some_rule


def test_the_union_matches_every_sample_secret_and_is_shorter_than_none() -> None:
    for _, text, _ in FOUND:
        assert ANY_RULE.search(strip_invisible(text)) is not None
    assert SHORTEST == min(rule.shortest for rule in RULES) == 4


def test_a_rule_with_a_back_reference_cannot_join_the_union() -> None:
    import re

    echo = Rule("echo", 1, re.compile(r"(?P<q>['\"])x+(?P=q)"), lambda match: match.span())
    with pytest.raises(ValueError, match="rule echo uses a back-reference"):
        _any_of((echo,))


def test_a_rule_with_a_flag_the_union_cannot_scope_cannot_join_it() -> None:
    import re

    lines = Rule("lines", 1, re.compile(r"^key$", re.MULTILINE), lambda match: match.span())
    with pytest.raises(ValueError, match="rule lines uses a flag the union does not carry"):
        _any_of((lines,))
