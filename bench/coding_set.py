"""A labelled retrieval set of coding-agent memories, in English, French, German and Portuguese.

usage: .venv/bin/python bench/coding_set.py   (prints a summary of the set)

The memories are what a coding agent would store while working on one fictional project: a
payments service (package ``payments``, an operator CLI ``payctl``, a React dashboard under
``web/``, PostgreSQL, GitHub Actions, CalVer releases). Each concept is a decision ("we chose
X over Y because ..."), a convention or a pitfall, written once per language: the prose is
translated naturally (Portuguese is Brazilian), while code identifiers, paths, flags and
environment variables stay identical, as does the citation.

Most concepts are current. Five are superseded by a current concept (the old memory is still
stored, marked ``superseded``) and three were stored and then deleted by the user
(``forgotten``). The questions, translations of one another across the four languages, are:

- ``paraphrase``: what a developer would ask, in their own words, that a current memory
  answers;
- ``identifier``: a question naming an identifier, file, flag or environment variable of a
  current memory, in the form a developer would type it;
- ``superseded``: a question both memories of a pair match, answered only by the new one;
- ``forgotten``: a question about a deleted memory, which must not come back;
- ``negative``: a plausible question about the same project that nothing stored answers.

``relevant`` holds concepts, not item keys: a question in one language is answered by the
items of those concepts in the same language. Everything is hand-written in the tables
below; ``build()`` only assembles them, with no randomness, no external data and no network,
so the set is identical on every run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final, Literal

Language = Literal["en", "fr", "de", "pt"]
LANGUAGES: Final[tuple[Language, ...]] = ("en", "fr", "de", "pt")

Kind = Literal["decision", "convention", "pitfall"]
State = Literal["current", "superseded", "forgotten"]
Category = Literal["paraphrase", "identifier", "negative", "superseded", "forgotten"]


@dataclass(frozen=True)
class Item:
    """One stored memory: one concept written in one language."""

    key: str  # "<concept>.<language>", e.g. "retry-policy.fr"; unique
    concept: str  # "retry-policy": the same concept in every language
    language: Language
    kind: Kind
    title: str  # a short title in that language
    text: str  # 1 to 3 sentences in that language, as an agent would write the memory
    citation: str  # the repository path the memory cites (the same in every language)
    state: State
    superseded_by: str | None = None  # the concept that replaced a superseded one


@dataclass(frozen=True)
class Question:
    """A question and the concepts whose items (in the question's language) answer it."""

    key: str  # "q-<concept>-<n>.<language>" or "neg-<n>.<language>"; unique
    language: Language
    text: str
    relevant: tuple[str, ...]  # concepts (not item keys) that answer it; () for none
    category: Category


@dataclass(frozen=True)
class CodingSet:
    """The stored memories (current, superseded and forgotten) and the questions."""

    items: tuple[Item, ...]
    questions: tuple[Question, ...]


# --- the tables ------------------------------------------------------------------------------

_Localised = tuple[str, str]  # (title, text)


@dataclass(frozen=True)
class _Q:
    """One question about its concept, in the four languages (en, fr, de, pt)."""

    category: Literal["paraphrase", "identifier", "superseded", "forgotten"]
    en: str
    fr: str
    de: str
    pt: str


@dataclass(frozen=True)
class _Concept:
    """One concept: its memory in the four languages and the questions it answers.

    A current concept's questions answer to it; the question of a forgotten concept has no
    answer; a superseded concept has no question of its own (its pair's ``superseded``
    question belongs to the concept that replaced it).
    """

    slug: str
    kind: Kind
    citation: str
    en: _Localised
    fr: _Localised
    de: _Localised
    pt: _Localised
    questions: tuple[_Q, ...] = ()
    state: State = "current"
    superseded_by: str | None = None


def _in(language: Language, en: str, fr: str, de: str, pt: str) -> str:
    return {"en": en, "fr": fr, "de": de, "pt": pt}[language]


_CONCEPTS: Final[tuple[_Concept, ...]] = (
    # --- decisions ---------------------------------------------------------------------------
    _Concept(
        "retry-policy",
        "decision",
        "src/payments/retry.py",
        en=(
            "Retry policy for card processor calls",
            "Calls to the card processor are retried by `RetryPolicy` (src/payments/retry.py) "
            "with exponential backoff: 200 ms, doubled each time, capped at 30 s, at most 5 "
            "attempts. We chose this over fixed intervals because the processor throttles bursts "
            "of retries. The delays are computed by `payments.retry.backoff`.",
        ),
        fr=(
            "Politique de nouvelles tentatives vers le processeur de cartes",
            "Les appels au processeur de cartes sont relancés par `RetryPolicy` "
            "(src/payments/retry.py) avec un délai exponentiel : 200 ms, doublé à chaque essai, "
            "plafonné à 30 s, 5 tentatives au maximum. Nous l'avons préféré à des intervalles "
            "fixes parce que le processeur bride les rafales de relances. Les délais sont "
            "calculés par `payments.retry.backoff`.",
        ),
        de=(
            "Wiederholungsstrategie für Aufrufe beim Kartenabwickler",
            "Aufrufe beim Kartenabwickler wiederholt `RetryPolicy` (src/payments/retry.py) mit "
            "exponentiellem Backoff: 200 ms, jedes Mal verdoppelt, höchstens 30 s, maximal 5 "
            "Versuche. Das haben wir festen Intervallen vorgezogen, weil der Abwickler gehäufte "
            "Wiederholungen drosselt. Die Wartezeiten berechnet `payments.retry.backoff`.",
        ),
        pt=(
            "Política de novas tentativas nas chamadas ao processador de cartões",
            "As chamadas ao processador de cartões são repetidas pela `RetryPolicy` "
            "(src/payments/retry.py) com espera exponencial: 200 ms, dobrando a cada vez, com "
            "teto de 30 s e no máximo 5 tentativas. Escolhemos isso em vez de intervalos fixos "
            "porque o processador limita rajadas de novas tentativas. Os tempos de espera vêm de "
            "`payments.retry.backoff`.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "When a call to the card company's API fails, how long do we wait before trying "
                "again, and how many times?",
                "Quand un appel à l'API du prestataire de cartes échoue, combien de temps "
                "attend-on avant de réessayer, et combien de fois ?",
                "Wenn ein Aufruf an die API des Kartendienstleisters fehlschlägt: Wie lange "
                "warten wir bis zum nächsten Versuch, und wie oft?",
                "Quando uma chamada à API da empresa de cartões falha, quanto tempo esperamos "
                "antes de tentar de novo, e quantas vezes?",
            ),
            _Q(
                "identifier",
                "What does payments.retry.backoff compute?",
                "Que calcule payments.retry.backoff ?",
                "Was berechnet payments.retry.backoff?",
                "O que payments.retry.backoff calcula?",
            ),
        ),
    ),
    _Concept(
        "integer-minor-units",
        "decision",
        "src/payments/money.py",
        en=(
            "Amounts stored as integer minor units",
            "Money is represented by `Money(amount_minor: int, currency: str)` in "
            "src/payments/money.py and stored in BIGINT `amount_minor` columns next to an ISO "
            "4217 currency code. We chose integers over floats and NUMERIC because ledger sums "
            "must be exact and the processor API already works in minor units.",
        ),
        fr=(
            "Montants stockés en unités mineures entières",
            "L'argent est représenté par `Money(amount_minor: int, currency: str)` dans "
            "src/payments/money.py et stocké dans des colonnes BIGINT `amount_minor`, à côté d'un "
            "code devise ISO 4217. Nous avons choisi des entiers plutôt que des flottants ou "
            "NUMERIC, car les sommes du grand livre doivent être exactes et l'API du processeur "
            "raisonne déjà en unités mineures.",
        ),
        de=(
            "Beträge als ganzzahlige Untereinheiten",
            "Geldbeträge stellt `Money(amount_minor: int, currency: str)` in "
            "src/payments/money.py dar; gespeichert werden sie in BIGINT-Spalten `amount_minor` "
            "neben einem Währungscode nach ISO 4217. Wir haben Ganzzahlen statt Gleitkommazahlen "
            "oder NUMERIC gewählt, weil Summen im Hauptbuch exakt sein müssen und die API des "
            "Abwicklers ohnehin mit Untereinheiten arbeitet.",
        ),
        pt=(
            "Valores guardados como inteiros na menor unidade",
            "Dinheiro é representado por `Money(amount_minor: int, currency: str)` em "
            "src/payments/money.py e gravado em colunas BIGINT `amount_minor`, ao lado de um "
            "código de moeda ISO 4217. Escolhemos inteiros em vez de float ou NUMERIC porque as "
            "somas do livro-razão precisam ser exatas e a API do processador já trabalha na menor "
            "unidade.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What type should I use to save a price of 12.50 EUR in the database?",
                "Quel type utiliser pour enregistrer un prix de 12,50 EUR en base ?",
                "Welchen Typ nehme ich, um einen Preis von 12,50 EUR in der Datenbank abzulegen?",
                "Que tipo devo usar para salvar um preço de 12,50 EUR no banco?",
            ),
            _Q(
                "identifier",
                "What fields does Money in payments/money.py have?",
                "Quels champs a Money dans payments/money.py ?",
                "Welche Felder hat Money in payments/money.py?",
                "Quais campos tem o Money em payments/money.py?",
            ),
        ),
    ),
    _Concept(
        "postgres-database",
        "decision",
        "docs/adr/0003-database.md",
        en=(
            "PostgreSQL for the ledger database",
            "We chose PostgreSQL 16 over MySQL for the ledger because we rely on SERIALIZABLE "
            "transactions, partial indexes and `jsonb` for raw processor payloads. The service "
            "connects through `PAYMENTS_DB_URL`; the reasoning is in docs/adr/0003-database.md.",
        ),
        fr=(
            "PostgreSQL pour la base du grand livre",
            "Nous avons choisi PostgreSQL 16 plutôt que MySQL pour le grand livre, car nous nous "
            "appuyons sur les transactions SERIALIZABLE, les index partiels et `jsonb` pour les "
            "données brutes du processeur. Le service se connecte via `PAYMENTS_DB_URL` ; la "
            "justification se trouve dans docs/adr/0003-database.md.",
        ),
        de=(
            "PostgreSQL als Datenbank für das Hauptbuch",
            "Für das Hauptbuch haben wir PostgreSQL 16 statt MySQL gewählt, weil wir "
            "SERIALIZABLE-Transaktionen, partielle Indizes und `jsonb` für die Rohdaten des "
            "Abwicklers brauchen. Der Dienst verbindet sich über `PAYMENTS_DB_URL`; die "
            "Begründung steht in docs/adr/0003-database.md.",
        ),
        pt=(
            "PostgreSQL como banco do livro-razão",
            "Escolhemos PostgreSQL 16 em vez de MySQL para o livro-razão porque dependemos de "
            "transações SERIALIZABLE, índices parciais e `jsonb` para os payloads brutos do "
            "processador. O serviço se conecta via `PAYMENTS_DB_URL`; a justificativa está em "
            "docs/adr/0003-database.md.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Which database engine does the service run on, and why that one?",
                "Sur quel moteur de base de données le service tourne-t-il, et pourquoi celui-là ?",
                "Auf welcher Datenbank-Engine läuft der Dienst, und warum gerade auf der?",
                "Em qual motor de banco de dados o serviço roda, e por que esse?",
            ),
            _Q(
                "identifier",
                "What is PAYMENTS_DB_URL used for?",
                "À quoi sert PAYMENTS_DB_URL ?",
                "Wofür wird PAYMENTS_DB_URL verwendet?",
                "Para que serve a PAYMENTS_DB_URL?",
            ),
        ),
    ),
    _Concept(
        "idempotency-keys",
        "decision",
        "src/payments/api/idempotency.py",
        en=(
            "Idempotency keys on charge creation",
            "Every `POST /v1/charges` must carry an `Idempotency-Key` header; `IdempotencyStore` "
            "keeps the key and the first response for 24 hours in the `idempotency_keys` table "
            "and replays that response on a repeat. We chose server-side keys over client-side "
            "deduplication because mobile clients resend requests on flaky networks.",
        ),
        fr=(
            "Clés d'idempotence à la création d'un paiement",
            "Chaque `POST /v1/charges` doit porter un en-tête `Idempotency-Key` ; "
            "`IdempotencyStore` conserve la clé et la première réponse pendant 24 heures dans la "
            "table `idempotency_keys` et renvoie cette même réponse en cas de répétition. Nous "
            "avons préféré des clés côté serveur à une déduplication côté client, car les applis "
            "mobiles renvoient leurs requêtes sur les réseaux instables.",
        ),
        de=(
            "Idempotenzschlüssel beim Anlegen von Zahlungen",
            "Jeder `POST /v1/charges` braucht einen `Idempotency-Key`-Header; `IdempotencyStore` "
            "speichert den Schlüssel und die erste Antwort 24 Stunden lang in der Tabelle "
            "`idempotency_keys` und liefert bei einer Wiederholung genau diese Antwort erneut "
            "aus. Serverseitige Schlüssel haben wir clientseitiger Deduplizierung vorgezogen, "
            "weil mobile Clients bei wackligem Netz Anfragen erneut senden.",
        ),
        pt=(
            "Chaves de idempotência na criação de cobranças",
            "Todo `POST /v1/charges` precisa do cabeçalho `Idempotency-Key`; o `IdempotencyStore` "
            "guarda a chave e a primeira resposta por 24 horas na tabela `idempotency_keys` e "
            "devolve essa mesma resposta numa repetição. Preferimos chaves no servidor a "
            "deduplicação no cliente porque os apps móveis reenviam requisições em redes "
            "instáveis.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What stops a customer from being billed twice if the app sends the same purchase "
                "request again?",
                "Qu'est-ce qui empêche un client d'être débité deux fois si l'appli renvoie la "
                "même demande d'achat ?",
                "Was verhindert, dass ein Kunde doppelt belastet wird, wenn die App dieselbe "
                "Kaufanfrage noch einmal schickt?",
                "O que impede que um cliente seja cobrado duas vezes se o app mandar o mesmo "
                "pedido de compra de novo?",
            ),
            _Q(
                "identifier",
                "What is stored in the idempotency_keys table?",
                "Qu'est-ce qui est stocké dans la table idempotency_keys ?",
                "Was steht in der Tabelle idempotency_keys?",
                "O que fica gravado na tabela idempotency_keys?",
            ),
        ),
    ),
    _Concept(
        "react-vite-dashboard",
        "decision",
        "web/vite.config.ts",
        en=(
            "Dashboard built with React and Vite",
            "The merchant dashboard in web/ is a React single-page app bundled with Vite; we "
            "chose it over Next.js because everything sits behind a login, so server-side "
            "rendering buys nothing. Build settings live in web/vite.config.ts.",
        ),
        fr=(
            "Tableau de bord en React avec Vite",
            "Le tableau de bord marchand dans web/ est une application monopage React empaquetée "
            "avec Vite ; nous l'avons préférée à Next.js, car tout se trouve derrière une "
            "connexion et le rendu côté serveur n'apporte rien. La configuration de build est "
            "dans web/vite.config.ts.",
        ),
        de=(
            "Dashboard mit React und Vite",
            "Das Händler-Dashboard in web/ ist eine React-Single-Page-App, gebündelt mit Vite; "
            "Next.js haben wir verworfen, weil alles hinter einem Login liegt und serverseitiges "
            "Rendern nichts bringt. Die Build-Einstellungen stehen in web/vite.config.ts.",
        ),
        pt=(
            "Painel feito com React e Vite",
            "O painel do lojista em web/ é uma SPA em React empacotada com Vite; escolhemos isso "
            "em vez de Next.js porque tudo fica atrás de login, então renderizar no servidor não "
            "traz ganho nenhum. As configurações de build ficam em web/vite.config.ts.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What is the web UI built with, and why didn't we pick a framework that renders "
                "pages on the server?",
                "Avec quoi l'interface web est-elle construite, et pourquoi pas un framework qui "
                "génère les pages sur le serveur ?",
                "Womit ist die Weboberfläche gebaut, und warum kein Framework, das die Seiten auf "
                "dem Server erzeugt?",
                "Com o que a interface web foi feita, e por que não escolhemos um framework que "
                "gera as páginas no servidor?",
            ),
            _Q(
                "identifier",
                "What is configured in vite.config.ts?",
                "Qu'est-ce qui est configuré dans vite.config.ts ?",
                "Was wird in vite.config.ts konfiguriert?",
                "O que é configurado no vite.config.ts?",
            ),
        ),
    ),
    _Concept(
        "typer-cli",
        "decision",
        "src/payctl/main.py",
        en=(
            "payctl is built on Typer",
            "The operator CLI `payctl` (entry point `payctl.main:app` in src/payctl/main.py) is "
            "built with Typer rather than plain argparse, because type-annotated commands give us "
            "`--help` text and shell completion for free. Each group of subcommands is its own "
            "module under src/payctl/.",
        ),
        fr=(
            "payctl repose sur Typer",
            "La CLI d'exploitation `payctl` (point d'entrée `payctl.main:app` dans "
            "src/payctl/main.py) est écrite avec Typer plutôt qu'avec argparse seul, car des "
            "commandes annotées par types nous donnent gratuitement l'aide `--help` et la "
            "complétion dans le shell. Chaque groupe de sous-commandes a son propre module sous "
            "src/payctl/.",
        ),
        de=(
            "payctl basiert auf Typer",
            "Die Betriebs-CLI `payctl` (Einstiegspunkt `payctl.main:app` in src/payctl/main.py) "
            "ist mit Typer statt mit reinem argparse gebaut, weil typannotierte Befehle uns "
            "`--help`-Texte und Shell-Vervollständigung gratis liefern. Jede Gruppe von "
            "Unterbefehlen hat ein eigenes Modul unter src/payctl/.",
        ),
        pt=(
            "O payctl é construído com Typer",
            "A CLI de operação `payctl` (ponto de entrada `payctl.main:app` em "
            "src/payctl/main.py) usa Typer em vez de argparse puro, porque comandos com anotações "
            "de tipo dão `--help` e autocompletar no shell de graça. Cada grupo de subcomandos "
            "tem seu próprio módulo em src/payctl/.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Which library parses the arguments of our ops command-line tool?",
                "Quelle bibliothèque analyse les arguments de notre outil d'exploitation en ligne "
                "de commande ?",
                "Welche Bibliothek wertet die Argumente unseres Kommandozeilen-Tools für den "
                "Betrieb aus?",
                "Qual biblioteca faz o parsing dos argumentos da nossa ferramenta de linha de "
                "comando de operação?",
            ),
            _Q(
                "identifier",
                "Where do I add a new payctl subcommand?",
                "Où ajouter une nouvelle sous-commande à payctl ?",
                "Wo füge ich einen neuen payctl-Unterbefehl hinzu?",
                "Onde adiciono um novo subcomando ao payctl?",
            ),
        ),
    ),
    _Concept(
        "alembic-migrations",
        "decision",
        "migrations/env.py",
        en=(
            "Schema migrations with Alembic",
            "Database schema changes go through Alembic: create them with `alembic revision "
            "--autogenerate -m <message>`, always review the generated file by hand, and keep one "
            "revision per pull request. We picked Alembic over hand-run SQL scripts so that every "
            "environment can report its revision with `alembic current`.",
        ),
        fr=(
            "Migrations de schéma avec Alembic",
            "Les changements de schéma passent par Alembic : on les crée avec `alembic revision "
            "--autogenerate -m <message>`, on relit toujours à la main le fichier généré, et on "
            "s'en tient à une révision par pull request. Nous avons choisi Alembic plutôt que des "
            "scripts SQL lancés à la main pour que chaque environnement puisse indiquer sa "
            "révision avec `alembic current`.",
        ),
        de=(
            "Schemamigrationen mit Alembic",
            "Schemaänderungen laufen über Alembic: Man erzeugt sie mit `alembic revision "
            "--autogenerate -m <Nachricht>`, prüft die erzeugte Datei immer von Hand und bleibt "
            "bei einer Revision pro Pull Request. Alembic haben wir handgestarteten SQL-Skripten "
            "vorgezogen, damit jede Umgebung ihren Stand mit `alembic current` melden kann.",
        ),
        pt=(
            "Migrações de esquema com Alembic",
            "Mudanças de esquema passam pelo Alembic: crie-as com `alembic revision "
            "--autogenerate -m <mensagem>`, revise sempre à mão o arquivo gerado e mantenha uma "
            "revisão por pull request. Escolhemos Alembic em vez de scripts SQL rodados à mão "
            "para que cada ambiente possa informar sua revisão com `alembic current`.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Can I commit the auto-generated database change script as it is, and can one PR "
                "contain several of them?",
                "Peut-on garder tel quel le script de modification de la base généré "
                "automatiquement, et une PR peut-elle en contenir plusieurs ?",
                "Kann ich das automatisch erzeugte Datenbank-Änderungsskript unverändert "
                "übernehmen, und darf ein PR mehrere davon enthalten?",
                "Posso usar como está o script de mudança do banco gerado automaticamente, e um "
                "PR pode ter vários deles?",
            ),
            _Q(
                "identifier",
                "What does alembic current tell us?",
                "Que nous indique alembic current ?",
                "Was zeigt alembic current an?",
                "O que o alembic current mostra?",
            ),
        ),
    ),
    _Concept(
        "github-actions-deploy",
        "decision",
        ".github/workflows/deploy.yml",
        en=(
            "Deploys run on GitHub Actions",
            "Production deploys run in GitHub Actions: pushing a `v*` tag starts "
            ".github/workflows/deploy.yml, which builds the image, runs `alembic upgrade head` "
            "and rolls out to the cluster. We moved off Jenkins because its build agents drifted "
            "and nobody owned them.",
        ),
        fr=(
            "Les déploiements passent par GitHub Actions",
            "Les déploiements en production tournent dans GitHub Actions : pousser un tag `v*` "
            "lance .github/workflows/deploy.yml, qui construit l'image, exécute `alembic upgrade "
            "head` et déploie sur le cluster. Nous avons quitté Jenkins parce que ses agents de "
            "build dérivaient et que personne ne s'en occupait.",
        ),
        de=(
            "Deployments laufen über GitHub Actions",
            "Produktions-Deployments laufen in GitHub Actions: Ein gepushter `v*`-Tag startet "
            ".github/workflows/deploy.yml, das das Image baut, `alembic upgrade head` ausführt "
            "und auf den Cluster ausrollt. Von Jenkins sind wir weg, weil dessen Build-Agents "
            "auseinanderdrifteten und sich niemand zuständig fühlte.",
        ),
        pt=(
            "Deploys rodam no GitHub Actions",
            "Os deploys de produção rodam no GitHub Actions: enviar uma tag `v*` dispara o "
            ".github/workflows/deploy.yml, que gera a imagem, executa `alembic upgrade head` e "
            "publica no cluster. Saímos do Jenkins porque os agentes de build divergiam e ninguém "
            "cuidava deles.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What actually kicks off a rollout to prod?",
                "Qu'est-ce qui déclenche concrètement une mise en prod ?",
                "Was stößt eigentlich einen Rollout in die Produktion an?",
                "O que de fato dispara uma subida para produção?",
            ),
            _Q(
                "identifier",
                "What runs in deploy.yml?",
                "Qu'est-ce qui s'exécute dans deploy.yml ?",
                "Was läuft in deploy.yml?",
                "O que roda no deploy.yml?",
            ),
            _Q(
                "superseded",
                "Which CI server do we ship production builds from?",
                "Depuis quel serveur d'intégration continue livre-t-on en production ?",
                "Von welchem CI-Server aus liefern wir in die Produktion aus?",
                "De qual servidor de CI fazemos as entregas em produção?",
            ),
        ),
    ),
    _Concept(
        "webhook-outbox",
        "decision",
        "src/payments/webhooks/outbox.py",
        en=(
            "Outgoing webhooks go through a Postgres outbox",
            "Merchant webhooks are written to the `webhook_outbox` table in the same transaction "
            "as the payment change, and `OutboxWorker` (src/payments/webhooks/outbox.py) delivers "
            "them with `SELECT ... FOR UPDATE SKIP LOCKED`. This replaced Celery and RabbitMQ: "
            "one broker less to run, and no event is sent for a change that rolled back or lost "
            "for one that committed.",
        ),
        fr=(
            "Les webhooks sortants passent par une outbox Postgres",
            "Les webhooks destinés aux marchands sont écrits dans la table `webhook_outbox` dans "
            "la même transaction que la modification du paiement, puis `OutboxWorker` "
            "(src/payments/webhooks/outbox.py) les envoie avec `SELECT ... FOR UPDATE SKIP "
            "LOCKED`. Cela remplace Celery et RabbitMQ : un broker de moins à exploiter, et aucun "
            "événement n'est envoyé pour une modification annulée ni perdu pour une modification "
            "validée.",
        ),
        de=(
            "Ausgehende Webhooks über eine Postgres-Outbox",
            "Webhooks an Händler werden in derselben Transaktion wie die Zahlungsänderung in die "
            "Tabelle `webhook_outbox` geschrieben; `OutboxWorker` "
            "(src/payments/webhooks/outbox.py) stellt sie mit `SELECT ... FOR UPDATE SKIP LOCKED` "
            "zu. Das hat Celery und RabbitMQ abgelöst: ein Broker weniger im Betrieb, und kein "
            "Ereignis geht für eine zurückgerollte Änderung raus oder für eine bestätigte "
            "verloren.",
        ),
        pt=(
            "Webhooks de saída passam por uma outbox no Postgres",
            "Os webhooks para lojistas são gravados na tabela `webhook_outbox` na mesma transação "
            "da mudança no pagamento, e o `OutboxWorker` (src/payments/webhooks/outbox.py) os "
            "entrega com `SELECT ... FOR UPDATE SKIP LOCKED`. Isso substituiu Celery e RabbitMQ: "
            "um broker a menos para operar, e nenhum evento sai por uma mudança desfeita nem se "
            "perde numa mudança confirmada.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "How do notifications to merchants get sent out after a payment changes state?",
                "Comment les notifications aux marchands partent-elles quand un paiement change "
                "d'état ?",
                "Wie werden Benachrichtigungen an Händler verschickt, wenn sich der Status einer "
                "Zahlung ändert?",
                "Como as notificações aos lojistas são enviadas quando um pagamento muda de "
                "estado?",
            ),
            _Q(
                "identifier",
                "What does OutboxWorker do?",
                "Que fait OutboxWorker ?",
                "Was macht der OutboxWorker?",
                "O que o OutboxWorker faz?",
            ),
            _Q(
                "superseded",
                "Which message broker handles the webhook delivery jobs?",
                "Quel broker de messages gère les tâches d'envoi des webhooks ?",
                "Welcher Message-Broker verarbeitet die Zustellaufträge für Webhooks?",
                "Qual broker de mensagens cuida das tarefas de entrega de webhooks?",
            ),
        ),
    ),
    _Concept(
        "session-cookies",
        "decision",
        "web/src/auth/session.ts",
        en=(
            "Dashboard sessions use HttpOnly cookies",
            "The dashboard authenticates with a short-lived session cookie (`HttpOnly`, `Secure`, "
            "`SameSite=Strict`, 30 minutes sliding) set by `POST /auth/login`; "
            "web/src/auth/session.ts only checks `GET /auth/me`. We dropped JWTs in "
            "`localStorage` because any injected script could read them.",
        ),
        fr=(
            "Sessions du tableau de bord en cookies HttpOnly",
            "Le tableau de bord s'authentifie par un cookie de session de courte durée "
            "(`HttpOnly`, `Secure`, `SameSite=Strict`, 30 minutes glissantes) posé par `POST "
            "/auth/login` ; web/src/auth/session.ts se contente d'interroger `GET /auth/me`. Nous "
            "avons abandonné les JWT dans `localStorage` parce que n'importe quel script injecté "
            "pouvait les lire.",
        ),
        de=(
            "Dashboard-Sitzungen über HttpOnly-Cookies",
            "Das Dashboard authentifiziert sich mit einem kurzlebigen Sitzungs-Cookie "
            "(`HttpOnly`, `Secure`, `SameSite=Strict`, 30 Minuten gleitend), das `POST "
            "/auth/login` setzt; web/src/auth/session.ts fragt nur `GET /auth/me` ab. JWTs in "
            "`localStorage` haben wir abgeschafft, weil jedes eingeschleuste Skript sie lesen "
            "konnte.",
        ),
        pt=(
            "Sessões do painel com cookies HttpOnly",
            "O painel se autentica com um cookie de sessão de curta duração (`HttpOnly`, "
            "`Secure`, `SameSite=Strict`, 30 minutos renováveis) definido por `POST /auth/login`; "
            "web/src/auth/session.ts só consulta `GET /auth/me`. Abandonamos o JWT no "
            "`localStorage` porque qualquer script injetado conseguia lê-lo.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "How does the browser app remember that a merchant is logged in?",
                "Comment l'appli web se souvient-elle qu'un marchand est connecté ?",
                "Wie merkt sich die Browser-App, dass ein Händler angemeldet ist?",
                "Como o app no navegador lembra que o lojista está logado?",
            ),
            _Q(
                "identifier",
                "What does auth/session.ts do in the web app?",
                "Que fait auth/session.ts dans l'appli web ?",
                "Was macht auth/session.ts in der Web-App?",
                "O que o auth/session.ts faz no app web?",
            ),
            _Q(
                "superseded",
                "Where does the front end keep the user's access token?",
                "Où le front stocke-t-il le jeton d'accès de l'utilisateur ?",
                "Wo speichert das Frontend das Zugriffstoken des Nutzers?",
                "Onde o front-end guarda o token de acesso do usuário?",
            ),
        ),
    ),
    _Concept(
        "uv-lockfile",
        "decision",
        "uv.lock",
        en=(
            "Dependencies are locked with uv",
            "Python dependencies are declared in pyproject.toml and locked in uv.lock; add one "
            "with `uv add <package>` and install exactly the lock with `uv sync --frozen`, as CI "
            "does. We replaced pip-tools because resolving took minutes and the per-environment "
            "requirements files kept drifting apart.",
        ),
        fr=(
            "Dépendances verrouillées avec uv",
            "Les dépendances Python sont déclarées dans pyproject.toml et figées dans uv.lock ; "
            "on en ajoute une avec `uv add <paquet>` et on installe exactement le verrou avec `uv "
            "sync --frozen`, comme le fait la CI. Nous avons remplacé pip-tools parce que la "
            "résolution prenait des minutes et que les fichiers requirements de chaque "
            "environnement finissaient toujours par diverger.",
        ),
        de=(
            "Abhängigkeiten werden mit uv gesperrt",
            "Python-Abhängigkeiten stehen in pyproject.toml und sind in uv.lock festgeschrieben; "
            "neue fügt man mit `uv add <Paket>` hinzu, und `uv sync --frozen` installiert genau "
            "den Lock-Stand, so wie es auch die CI tut. pip-tools haben wir ersetzt, weil das "
            "Auflösen Minuten dauerte und die requirements-Dateien der einzelnen Umgebungen "
            "ständig auseinanderliefen.",
        ),
        pt=(
            "Dependências travadas com uv",
            "As dependências Python são declaradas no pyproject.toml e travadas no uv.lock; "
            "adicione uma com `uv add <pacote>` e instale exatamente o lock com `uv sync "
            "--frozen`, como a CI faz. Substituímos o pip-tools porque a resolução levava minutos "
            "e os arquivos requirements de cada ambiente viviam divergindo.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I need a new third-party library in the backend; how do I add it so that "
                "everyone gets the same version?",
                "J'ai besoin d'une nouvelle bibliothèque tierce côté backend : comment l'ajouter "
                "pour que tout le monde ait la même version ?",
                "Ich brauche eine neue Fremdbibliothek im Backend. Wie füge ich sie hinzu, damit "
                "alle dieselbe Version bekommen?",
                "Preciso de uma nova biblioteca de terceiros no backend: como adiciono para que "
                "todo mundo tenha a mesma versão?",
            ),
            _Q(
                "identifier",
                "When do we run uv sync --frozen?",
                "Quand lance-t-on uv sync --frozen ?",
                "Wann führen wir uv sync --frozen aus?",
                "Quando rodamos uv sync --frozen?",
            ),
            _Q(
                "superseded",
                "How do I regenerate the pinned dependency versions after changing one?",
                "Comment régénérer les versions épinglées des dépendances après en avoir modifié "
                "une ?",
                "Wie erzeuge ich die gepinnten Versionen der Abhängigkeiten neu, nachdem ich eine "
                "geändert habe?",
                "Como regero as versões fixadas das dependências depois de mudar uma delas?",
            ),
        ),
    ),
    _Concept(
        "postgres-test-containers",
        "decision",
        "tests/integration/conftest.py",
        en=(
            "Integration tests run against real PostgreSQL",
            "The `pg_database` fixture in tests/integration/conftest.py starts a throwaway "
            "PostgreSQL 16 container with testcontainers and applies the migrations once per "
            "session. We switched from in-memory SQLite because it hid locking and `jsonb` bugs "
            "that only showed up in production.",
        ),
        fr=(
            "Les tests d'intégration tournent sur un vrai PostgreSQL",
            "La fixture `pg_database` de tests/integration/conftest.py démarre un conteneur "
            "PostgreSQL 16 jetable avec testcontainers et applique les migrations une fois par "
            "session. Nous avons abandonné SQLite en mémoire parce qu'il masquait des bugs de "
            "verrous et de `jsonb` qui n'apparaissaient qu'en production.",
        ),
        de=(
            "Integrationstests laufen gegen echtes PostgreSQL",
            "Die Fixture `pg_database` in tests/integration/conftest.py startet mit "
            "testcontainers einen Wegwerf-Container mit PostgreSQL 16 und spielt die Migrationen "
            "einmal pro Sitzung ein. Von SQLite im Speicher sind wir weg, weil es Sperr- und "
            "`jsonb`-Fehler verdeckte, die erst in Produktion auftraten.",
        ),
        pt=(
            "Testes de integração rodam num PostgreSQL de verdade",
            "A fixture `pg_database` em tests/integration/conftest.py sobe um contêiner "
            "descartável de PostgreSQL 16 com testcontainers e aplica as migrações uma vez por "
            "sessão. Trocamos o SQLite em memória porque ele escondia bugs de lock e de `jsonb` "
            "que só apareciam em produção.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Which database do the tests that hit the DB use, and do I have to install one on "
                "my machine?",
                "Quelle base utilisent les tests qui touchent la base de données, et dois-je en "
                "installer une sur ma machine ?",
                "Welche Datenbank nutzen die Tests, die auf die DB zugreifen, und muss ich selbst "
                "eine installieren?",
                "Qual banco os testes que acessam o banco usam, e preciso instalar um na minha "
                "máquina?",
            ),
            _Q(
                "identifier",
                "What does the pg_database fixture set up?",
                "Que met en place la fixture pg_database ?",
                "Was richtet die Fixture pg_database ein?",
                "O que a fixture pg_database prepara?",
            ),
            _Q(
                "superseded",
                "Do the database tests run on an in-memory database?",
                "Les tests de base de données tournent-ils sur une base en mémoire ?",
                "Laufen die Datenbanktests auf einer In-Memory-Datenbank?",
                "Os testes de banco rodam num banco em memória?",
            ),
        ),
    ),
    _Concept(
        "feature-flags-file",
        "decision",
        "config/flags.toml",
        en=(
            "Feature flags live in config/flags.toml",
            "Feature flags are plain per-environment entries in config/flags.toml, read with "
            "`flags.is_enabled()` (for example for `new_checkout`); we chose a versioned file "
            "over a hosted flag service so that every deploy is reproducible from git. Remove a "
            "flag in the release after it reaches 100 %.",
        ),
        fr=(
            "Les feature flags vivent dans config/flags.toml",
            "Les feature flags sont de simples entrées par environnement dans config/flags.toml, "
            "lues avec `flags.is_enabled()` (par exemple pour `new_checkout`) ; nous avons "
            "préféré un fichier versionné à un service de flags hébergé pour que chaque "
            "déploiement soit reproductible depuis git. Supprimer un flag dans la release qui "
            "suit son passage à 100 %.",
        ),
        de=(
            "Feature-Flags stehen in config/flags.toml",
            "Feature-Flags sind einfache Einträge pro Umgebung in config/flags.toml, abgefragt "
            "mit `flags.is_enabled()` (etwa für `new_checkout`); eine versionierte Datei war uns "
            "lieber als ein gehosteter Flag-Dienst, damit jedes Deployment aus git reproduzierbar "
            "ist. Ein Flag wird im Release nach Erreichen von 100 % entfernt.",
        ),
        pt=(
            "Feature flags ficam em config/flags.toml",
            "As feature flags são entradas simples por ambiente em config/flags.toml, lidas com "
            "`flags.is_enabled()` (por exemplo para `new_checkout`); preferimos um arquivo "
            "versionado a um serviço de flags hospedado para que todo deploy seja reproduzível a "
            "partir do git. Remova a flag na release seguinte àquela em que ela chegou a 100 %.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "How do we switch an unfinished feature on in one environment but not in the "
                "others?",
                "Comment active-t-on une fonctionnalité pas encore finie dans un environnement "
                "mais pas dans les autres ?",
                "Wie schalten wir eine noch unfertige Funktion in einer Umgebung ein, in den "
                "anderen aber nicht?",
                "Como ligamos uma funcionalidade ainda inacabada em um ambiente e não nos outros?",
            ),
            _Q(
                "identifier",
                "Where does flags.is_enabled read its values from?",
                "Où flags.is_enabled lit-il ses valeurs ?",
                "Woher liest flags.is_enabled seine Werte?",
                "De onde o flags.is_enabled lê os valores?",
            ),
        ),
    ),
    _Concept(
        "url-api-versioning",
        "decision",
        "docs/adr/0007-api-versioning.md",
        en=(
            "Public API versioned in the URL path",
            "The public API carries its version in the path (`/v1/`, `/v2/`) instead of an "
            "`Accept` header, because merchants debug with curl and logs show the path. Breaking "
            "changes need a new version, and an old version stays supported for 12 months after "
            "its successor ships; see docs/adr/0007-api-versioning.md.",
        ),
        fr=(
            "Version de l'API publique dans le chemin de l'URL",
            "L'API publique porte sa version dans le chemin (`/v1/`, `/v2/`) plutôt que dans un "
            "en-tête `Accept`, parce que les marchands déboguent avec curl et que les logs "
            "montrent le chemin. Tout changement incompatible exige une nouvelle version, et "
            "l'ancienne reste prise en charge 12 mois après la sortie de la suivante ; voir "
            "docs/adr/0007-api-versioning.md.",
        ),
        de=(
            "Versionierung der öffentlichen API im URL-Pfad",
            "Die öffentliche API trägt ihre Version im Pfad (`/v1/`, `/v2/`) statt in einem "
            "`Accept`-Header, weil Händler mit curl debuggen und Logs den Pfad zeigen. "
            "Inkompatible Änderungen brauchen eine neue Version, und eine alte Version wird nach "
            "Erscheinen der nächsten noch 12 Monate unterstützt; siehe "
            "docs/adr/0007-api-versioning.md.",
        ),
        pt=(
            "API pública versionada no caminho da URL",
            "A API pública leva a versão no caminho (`/v1/`, `/v2/`) e não num cabeçalho "
            "`Accept`, porque os lojistas depuram com curl e os logs mostram o caminho. Mudanças "
            "incompatíveis exigem uma nova versão, e a anterior continua com suporte por 12 meses "
            "depois que a próxima sai; veja docs/adr/0007-api-versioning.md.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "If I rename a field in a response, what do I have to do so that existing "
                "integrations don't break, and how long must the old shape keep working?",
                "Si je renomme un champ dans une réponse, que dois-je faire pour ne pas casser "
                "les intégrations existantes, et combien de temps l'ancien format doit-il "
                "continuer à marcher ?",
                "Wenn ich ein Feld in einer Antwort umbenenne: Was muss ich tun, damit bestehende "
                "Integrationen nicht brechen, und wie lange muss das alte Format weiter "
                "funktionieren?",
                "Se eu renomear um campo numa resposta, o que preciso fazer para não quebrar as "
                "integrações existentes, e por quanto tempo o formato antigo tem que continuar "
                "funcionando?",
            ),
            _Q(
                "identifier",
                "What did adr/0007 decide?",
                "Qu'a décidé l'adr/0007 ?",
                "Was legt adr/0007 fest?",
                "O que a adr/0007 decidiu?",
            ),
        ),
    ),
    # --- conventions -------------------------------------------------------------------------
    _Concept(
        "test-layout",
        "convention",
        "tests/README.md",
        en=(
            "Where tests live and how they are named",
            "Unit tests go in tests/unit/ and mirror the package layout, so "
            "src/payments/refunds/service.py is tested by tests/unit/refunds/test_service.py. "
            "Tests that need a database or the network go in tests/integration/ and carry "
            "`@pytest.mark.integration`, which `make test-fast` skips.",
        ),
        fr=(
            "Emplacement et nommage des tests",
            "Les tests unitaires vont dans tests/unit/ et reprennent l'arborescence du paquet : "
            "src/payments/refunds/service.py est testé par tests/unit/refunds/test_service.py. "
            "Les tests qui ont besoin d'une base de données ou du réseau vont dans "
            "tests/integration/ et portent `@pytest.mark.integration`, que `make test-fast` "
            "ignore.",
        ),
        de=(
            "Wo Tests liegen und wie sie heißen",
            "Unit-Tests liegen in tests/unit/ und spiegeln den Paketaufbau, d. h. "
            "src/payments/refunds/service.py wird von tests/unit/refunds/test_service.py "
            "getestet. Tests, die eine Datenbank oder das Netzwerk brauchen, kommen nach "
            "tests/integration/ und tragen `@pytest.mark.integration`, was `make test-fast` "
            "überspringt.",
        ),
        pt=(
            "Onde ficam os testes e como se chamam",
            "Testes unitários ficam em tests/unit/ e espelham a estrutura do pacote: "
            "src/payments/refunds/service.py é testado por tests/unit/refunds/test_service.py. "
            "Testes que precisam de banco de dados ou de rede vão para tests/integration/ e levam "
            "`@pytest.mark.integration`, que o `make test-fast` pula.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I just added a module for payouts; where does its test file go and what do I "
                "name it?",
                "Je viens d'ajouter un module pour les versements aux marchands : où mettre son "
                "fichier de test et comment le nommer ?",
                "Ich habe gerade ein Modul für Auszahlungen angelegt. Wohin kommt die Testdatei, "
                "und wie nenne ich sie?",
                "Acabei de criar um módulo de repasses: onde fica o arquivo de teste e que nome "
                "dou a ele?",
            ),
            _Q(
                "identifier",
                "What does make test-fast leave out?",
                "Qu'est-ce que make test-fast laisse de côté ?",
                "Was lässt make test-fast aus?",
                "O que o make test-fast deixa de fora?",
            ),
        ),
    ),
    _Concept(
        "db-naming",
        "convention",
        "docs/conventions/database.md",
        en=(
            "Database naming rules",
            "Tables are plural snake_case (`payment_intents`, `refund_requests`), foreign keys "
            "are `<singular>_id`, and timestamp columns end in `_at` and use `timestamptz` in "
            "UTC. Index names follow `ix_<table>__<columns>` so that migrations can drop them by "
            "name.",
        ),
        fr=(
            "Règles de nommage en base",
            "Les tables sont au pluriel en snake_case (`payment_intents`, `refund_requests`), les "
            "clés étrangères s'appellent `<singulier>_id`, et les colonnes d'horodatage finissent "
            "par `_at` et sont en `timestamptz` UTC. Les index suivent `ix_<table>__<colonnes>` "
            "pour que les migrations puissent les supprimer par leur nom.",
        ),
        de=(
            "Namensregeln in der Datenbank",
            "Tabellen heißen im Plural und in snake_case (`payment_intents`, `refund_requests`), "
            "Fremdschlüssel `<Singular>_id`, und Zeitstempelspalten enden auf `_at` und sind "
            "`timestamptz` in UTC. Indexnamen folgen `ix_<Tabelle>__<Spalten>`, damit Migrationen "
            "sie per Namen löschen können.",
        ),
        pt=(
            "Regras de nomes no banco",
            "Tabelas usam plural em snake_case (`payment_intents`, `refund_requests`), chaves "
            "estrangeiras são `<singular>_id` e colunas de data e hora terminam em `_at` e usam "
            "`timestamptz` em UTC. Índices seguem `ix_<tabela>__<colunas>` para que as migrações "
            "possam removê-los pelo nome.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What should I call a new table and its date columns?",
                "Comment nommer une nouvelle table et ses colonnes de date ?",
                "Wie benenne ich eine neue Tabelle und ihre Datumsspalten?",
                "Que nome dou a uma tabela nova e às colunas de data dela?",
            ),
            _Q(
                "identifier",
                "Is the table for the PaymentIntent model called payment_intent or "
                "payment_intents?",
                "La table du modèle PaymentIntent s'appelle-t-elle payment_intent ou "
                "payment_intents ?",
                "Heißt die Tabelle zum Modell PaymentIntent payment_intent oder payment_intents?",
                "A tabela do modelo PaymentIntent se chama payment_intent ou payment_intents?",
            ),
        ),
    ),
    _Concept(
        "conventional-commits",
        "convention",
        "CONTRIBUTING.md",
        en=(
            "Commit messages follow Conventional Commits",
            "Commit subjects use Conventional Commits with the package as scope, e.g. "
            "`fix(ledger): reject negative reversals` or `feat(web): export refunds as CSV`; a "
            "`BREAKING CHANGE:` footer is required for incompatible changes. The release notes "
            "are generated from these subjects, so write them for merchants to read.",
        ),
        fr=(
            "Messages de commit au format Conventional Commits",
            "Les sujets de commit suivent Conventional Commits, avec le paquet comme portée, par "
            "exemple `fix(ledger): reject negative reversals` ou `feat(web): export refunds as "
            "CSV` ; un pied de page `BREAKING CHANGE:` est obligatoire pour tout changement "
            "incompatible. Les notes de version sont générées à partir de ces sujets : les écrire "
            "pour qu'un marchand puisse les lire.",
        ),
        de=(
            "Commit-Nachrichten nach Conventional Commits",
            "Commit-Betreffzeilen folgen Conventional Commits mit dem Paket als Scope, etwa "
            "`fix(ledger): reject negative reversals` oder `feat(web): export refunds as CSV`; "
            "bei inkompatiblen Änderungen ist ein `BREAKING CHANGE:`-Footer Pflicht. Die Release "
            "Notes werden aus diesen Zeilen erzeugt, also so schreiben, dass Händler sie lesen "
            "können.",
        ),
        pt=(
            "Mensagens de commit seguem Conventional Commits",
            "Os títulos de commit seguem Conventional Commits, com o pacote como escopo, por "
            "exemplo `fix(ledger): reject negative reversals` ou `feat(web): export refunds as "
            "CSV`; um rodapé `BREAKING CHANGE:` é obrigatório em mudanças incompatíveis. As notas "
            "de versão são geradas a partir desses títulos, então escreva pensando no lojista que "
            "vai lê-las.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "How should I word the first line when I commit a bug fix?",
                "Comment formuler la première ligne quand je committe une correction de bug ?",
                "Wie formuliere ich die erste Zeile, wenn ich einen Bugfix committe?",
                "Como escrevo a primeira linha quando faço commit de uma correção de bug?",
            ),
            _Q(
                "identifier",
                "When do I need a BREAKING CHANGE footer?",
                "Quand faut-il un pied de page BREAKING CHANGE ?",
                "Wann brauche ich einen BREAKING CHANGE-Footer?",
                "Quando preciso de um rodapé BREAKING CHANGE?",
            ),
        ),
    ),
    _Concept(
        "branch-naming",
        "convention",
        "docs/workflow.md",
        en=(
            "Short-lived branches and squash merges",
            "We work trunk-based: branches live a few days at most and are named "
            "`<initials>/<ticket>-<slug>`, e.g. `ab/PAY-142-refund-limits`. Pull requests into "
            "`main` are squash-merged and the branch is deleted afterwards.",
        ),
        fr=(
            "Branches courtes et fusions en squash",
            "Nous travaillons en trunk-based : une branche vit quelques jours au plus et se nomme "
            "`<initiales>/<ticket>-<slug>`, par exemple `ab/PAY-142-refund-limits`. Les pull "
            "requests vers `main` sont fusionnées en squash, puis la branche est supprimée.",
        ),
        de=(
            "Kurzlebige Branches und Squash-Merges",
            "Wir arbeiten trunk-based: Branches leben höchstens ein paar Tage und heißen "
            "`<Initialen>/<Ticket>-<Slug>`, z. B. `ab/PAY-142-refund-limits`. Pull Requests nach "
            "`main` werden per Squash gemergt, danach wird der Branch gelöscht.",
        ),
        pt=(
            "Branches curtos e merge com squash",
            "Trabalhamos no modelo trunk-based: um branch dura no máximo alguns dias e se chama "
            "`<iniciais>/<ticket>-<slug>`, por exemplo `ab/PAY-142-refund-limits`. Pull requests "
            "para a `main` entram com squash merge e o branch é apagado em seguida.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What should I call my git branch for the ticket I'm picking up, and what happens "
                "to it once my work is merged?",
                "Comment appeler ma branche git pour le ticket que je prends, et que devient-elle "
                "une fois mon travail fusionné ?",
                "Wie nenne ich meinen Git-Branch für das Ticket, das ich übernehme, und was "
                "passiert mit ihm, wenn meine Arbeit gemergt ist?",
                "Que nome dou ao meu branch no git para o ticket que estou pegando, e o que "
                "acontece com ele depois do merge?",
            ),
            _Q(
                "identifier",
                "Would jd/PAY-377-fix-receipts be a correct branch name?",
                "jd/PAY-377-fix-receipts est-il un nom de branche correct ?",
                "Wäre jd/PAY-377-fix-receipts ein korrekter Branch-Name?",
                "jd/PAY-377-fix-receipts seria um nome de branch correto?",
            ),
        ),
    ),
    _Concept(
        "error-codes",
        "convention",
        "src/payments/api/errors.py",
        en=(
            "API error format and codes",
            "API errors are returned as a JSON object `error` with `code` and `message` fields, "
            "where `code` is a snake_case member of the `ErrorCode` enum in "
            "src/payments/api/errors.py, such as `card_declined` or `insufficient_funds`. Codes "
            "are part of the public contract: never rename or reuse one, add a new one instead.",
        ),
        fr=(
            "Format et codes d'erreur de l'API",
            "Les erreurs de l'API sont renvoyées sous la forme d'un objet JSON `error` avec les "
            "champs `code` et `message`, où `code` est un membre snake_case de l'enum `ErrorCode` "
            "de src/payments/api/errors.py, comme `card_declined` ou `insufficient_funds`. Les "
            "codes font partie du contrat public : ne jamais en renommer ni en réutiliser un, en "
            "ajouter un nouveau à la place.",
        ),
        de=(
            "Fehlerformat und Fehlercodes der API",
            "API-Fehler kommen als JSON-Objekt `error` mit den Feldern `code` und `message` "
            "zurück, wobei `code` ein snake_case-Mitglied des Enums `ErrorCode` in "
            "src/payments/api/errors.py ist, etwa `card_declined` oder `insufficient_funds`. "
            "Codes gehören zum öffentlichen Vertrag: nie umbenennen oder wiederverwenden, sondern "
            "einen neuen anlegen.",
        ),
        pt=(
            "Formato e códigos de erro da API",
            "Erros da API voltam como um objeto JSON `error` com os campos `code` e `message`, em "
            "que `code` é um membro snake_case do enum `ErrorCode` de src/payments/api/errors.py, "
            "como `card_declined` ou `insufficient_funds`. Os códigos fazem parte do contrato "
            "público: nunca renomeie nem reutilize um, crie um novo.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What should the response body look like when the bank refuses a charge?",
                "À quoi doit ressembler le corps de la réponse quand la banque refuse un paiement "
                "?",
                "Wie sieht der Response-Body aus, wenn die Bank eine Zahlung ablehnt?",
                "Como deve ser o corpo da resposta quando o banco recusa uma cobrança?",
            ),
            _Q(
                "identifier",
                "Can I rename a member of ErrorCode?",
                "Puis-je renommer un membre de ErrorCode ?",
                "Darf ich ein Mitglied von ErrorCode umbenennen?",
                "Posso renomear um membro do ErrorCode?",
            ),
        ),
    ),
    _Concept(
        "component-layout",
        "convention",
        "web/src/components/README.md",
        en=(
            "React component layout",
            "Each dashboard component lives in its own folder, "
            "`web/src/components/<Name>/<Name>.tsx`, with `<Name>.test.tsx` next to it and an "
            "`index.ts` that re-exports it; component names are PascalCase, e.g. `RefundTable`. "
            "Custom hooks go in web/src/hooks/ and start with `use`, e.g. `useMerchant`.",
        ),
        fr=(
            "Organisation des composants React",
            "Chaque composant du tableau de bord a son propre dossier, "
            "`web/src/components/<Name>/<Name>.tsx`, avec `<Name>.test.tsx` à côté et un "
            "`index.ts` qui le réexporte ; les noms de composants sont en PascalCase, par exemple "
            "`RefundTable`. Les hooks maison vont dans web/src/hooks/ et commencent par `use`, "
            "comme `useMerchant`.",
        ),
        de=(
            "Aufbau der React-Komponenten",
            "Jede Dashboard-Komponente hat einen eigenen Ordner, "
            "`web/src/components/<Name>/<Name>.tsx`, daneben `<Name>.test.tsx` und eine "
            "`index.ts`, die sie re-exportiert; Komponentennamen sind PascalCase, z. B. "
            "`RefundTable`. Eigene Hooks liegen in web/src/hooks/ und beginnen mit `use`, etwa "
            "`useMerchant`.",
        ),
        pt=(
            "Organização dos componentes React",
            "Cada componente do painel fica na própria pasta, "
            "`web/src/components/<Name>/<Name>.tsx`, com `<Name>.test.tsx` ao lado e um "
            "`index.ts` que o reexporta; nomes de componentes usam PascalCase, como "
            "`RefundTable`. Hooks próprios ficam em web/src/hooks/ e começam com `use`, como "
            "`useMerchant`.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I'm adding a new widget to the merchant UI; which files do I create, and where?",
                "J'ajoute un nouveau widget à l'interface marchand : quels fichiers créer, et où ?",
                "Ich baue ein neues Widget in die Händleroberfläche ein. Welche Dateien lege ich "
                "wo an?",
                "Vou adicionar um widget novo na interface do lojista: que arquivos crio, e onde?",
            ),
            _Q(
                "identifier",
                "Where do I put a hook like useRefunds?",
                "Où mettre un hook comme useRefunds ?",
                "Wohin gehört ein Hook wie useRefunds?",
                "Onde coloco um hook como useRefunds?",
            ),
        ),
    ),
    _Concept(
        "settings-env-vars",
        "convention",
        "src/payments/settings.py",
        en=(
            "Configuration comes from PAYMENTS_ environment variables",
            "All runtime settings are environment variables prefixed `PAYMENTS_` (for example "
            "`PAYMENTS_ENV`, `PAYMENTS_HTTP_PORT`), parsed once into the frozen `Settings` object "
            "in src/payments/settings.py. Code gets its configuration from `get_settings()`; "
            "never read `os.environ` anywhere else.",
        ),
        fr=(
            "La configuration vient des variables d'environnement PAYMENTS_",
            "Tous les réglages d'exécution sont des variables d'environnement préfixées par "
            "`PAYMENTS_` (par exemple `PAYMENTS_ENV`, `PAYMENTS_HTTP_PORT`), analysées une seule "
            "fois dans l'objet figé `Settings` de src/payments/settings.py. Le code obtient sa "
            "configuration via `get_settings()` ; ne jamais lire `os.environ` ailleurs.",
        ),
        de=(
            "Konfiguration über PAYMENTS_-Umgebungsvariablen",
            "Alle Laufzeiteinstellungen sind Umgebungsvariablen mit dem Präfix `PAYMENTS_` (etwa "
            "`PAYMENTS_ENV`, `PAYMENTS_HTTP_PORT`), die einmalig in das unveränderliche "
            "`Settings`-Objekt in src/payments/settings.py eingelesen werden. Code holt sich "
            "seine Konfiguration über `get_settings()`; `os.environ` wird nirgendwo sonst gelesen.",
        ),
        pt=(
            "Configuração vem de variáveis de ambiente PAYMENTS_",
            "Todas as configurações de execução são variáveis de ambiente com prefixo `PAYMENTS_` "
            "(por exemplo `PAYMENTS_ENV`, `PAYMENTS_HTTP_PORT`), lidas uma única vez para o "
            "objeto imutável `Settings` em src/payments/settings.py. O código obtém a "
            "configuração por `get_settings()`; nunca leia `os.environ` em outro lugar.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I want to make the timeout for processor calls configurable; where should the "
                "value come from, and how does my code get it?",
                "Je veux rendre configurable le délai d'expiration des appels au processeur : "
                "d'où doit venir la valeur, et comment mon code la récupère-t-il ?",
                "Ich möchte den Timeout für Aufrufe beim Abwickler konfigurierbar machen. Woher "
                "soll der Wert kommen, und wie kommt mein Code daran?",
                "Quero tornar configurável o timeout das chamadas ao processador: de onde o valor "
                "deve vir, e como meu código o obtém?",
            ),
            _Q(
                "identifier",
                "Can I read os.environ directly in the refunds module?",
                "Puis-je lire os.environ directement dans le module des remboursements ?",
                "Darf ich im Refund-Modul direkt os.environ lesen?",
                "Posso ler os.environ direto no módulo de reembolsos?",
            ),
        ),
    ),
    _Concept(
        "calver-releases",
        "convention",
        "scripts/release.py",
        en=(
            "Release versions use CalVer",
            "Releases are numbered `YYYY.MM.N` (e.g. `2024.06.2`, N starting again at 1 each "
            "month) and cut with `make release`, which runs scripts/release.py to bump "
            "`__version__` in src/payments/__init__.py and create the `v2024.06.2` tag. Never "
            "reuse a version number, not even that of a release that was pulled.",
        ),
        fr=(
            "Versions des releases en CalVer",
            "Les releases sont numérotées `YYYY.MM.N` (par exemple `2024.06.2`, N repartant de 1 "
            "chaque mois) et produites avec `make release`, qui lance scripts/release.py pour "
            "incrémenter `__version__` dans src/payments/__init__.py et créer le tag "
            "`v2024.06.2`. Ne jamais réutiliser un numéro de version, pas même celui d'une "
            "release retirée.",
        ),
        de=(
            "Release-Versionen nach CalVer",
            "Releases werden `YYYY.MM.N` nummeriert (z. B. `2024.06.2`, N beginnt jeden Monat "
            "wieder bei 1) und mit `make release` erstellt; das ruft scripts/release.py auf, "
            "erhöht `__version__` in src/payments/__init__.py und legt den Tag `v2024.06.2` an. "
            "Eine Versionsnummer wird nie wiederverwendet, auch nicht die eines zurückgezogenen "
            "Releases.",
        ),
        pt=(
            "Versões de release em CalVer",
            "As releases são numeradas `YYYY.MM.N` (por exemplo `2024.06.2`, com N voltando a 1 a "
            "cada mês) e geradas com `make release`, que roda scripts/release.py para atualizar "
            "`__version__` em src/payments/__init__.py e criar a tag `v2024.06.2`. Nunca "
            "reutilize um número de versão, nem mesmo o de uma release retirada.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What number should the third version we ship in March 2025 get?",
                "Quel numéro doit porter la troisième version livrée en mars 2025 ?",
                "Welche Nummer bekommt die dritte Version, die wir im März 2025 ausliefern?",
                "Que número deve ter a terceira versão que lançarmos em março de 2025?",
            ),
            _Q(
                "identifier",
                "What does make release do?",
                "Que fait make release ?",
                "Was macht make release?",
                "O que o make release faz?",
            ),
        ),
    ),
    _Concept(
        "codeowners-review",
        "convention",
        ".github/CODEOWNERS",
        en=(
            "Review rules from CODEOWNERS",
            "Every pull request needs one approval from a code owner listed in "
            ".github/CODEOWNERS; anything under src/payments/ledger/ or migrations/ needs two, "
            "one of them from @payments-core. Authors never approve their own changes, even with "
            "admin rights.",
        ),
        fr=(
            "Règles de relecture via CODEOWNERS",
            "Chaque pull request doit être approuvée par un propriétaire de code listé dans "
            ".github/CODEOWNERS ; tout ce qui touche src/payments/ledger/ ou migrations/ demande "
            "deux approbations, dont une de @payments-core. Un auteur n'approuve jamais ses "
            "propres changements, même avec des droits d'administrateur.",
        ),
        de=(
            "Review-Regeln aus CODEOWNERS",
            "Jeder Pull Request braucht eine Freigabe durch einen in .github/CODEOWNERS "
            "eingetragenen Code-Owner; alles unter src/payments/ledger/ oder migrations/ braucht "
            "zwei, davon eine von @payments-core. Autoren genehmigen ihre eigenen Änderungen nie, "
            "auch nicht mit Admin-Rechten.",
        ),
        pt=(
            "Regras de revisão pelo CODEOWNERS",
            "Todo pull request precisa da aprovação de um code owner listado em "
            ".github/CODEOWNERS; qualquer coisa em src/payments/ledger/ ou migrations/ precisa de "
            "duas, sendo uma de @payments-core. O autor nunca aprova as próprias mudanças, nem "
            "com permissão de administrador.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "How many people have to sign off before I can merge a change to the accounting "
                "code?",
                "Combien de personnes doivent valider avant que je puisse fusionner un changement "
                "dans le code comptable ?",
                "Wie viele Leute müssen zustimmen, bevor ich eine Änderung am Buchhaltungscode "
                "mergen darf?",
                "Quantas pessoas precisam aprovar antes de eu fazer merge de uma mudança no "
                "código contábil?",
            ),
            _Q(
                "identifier",
                "Who is @payments-core and when is their review required?",
                "Qui est @payments-core et quand sa relecture est-elle obligatoire ?",
                "Wer ist @payments-core, und wann ist deren Review Pflicht?",
                "Quem é @payments-core e quando a revisão deles é obrigatória?",
            ),
        ),
    ),
    _Concept(
        "strict-typing",
        "convention",
        "pyproject.toml",
        en=(
            "mypy --strict on all backend code",
            "CI runs `mypy --strict src/ tests/` and fails on any error. A `# type: ignore` must "
            "name the error code, as in `# type: ignore[arg-type]`, and carry a comment "
            "explaining why; prefer `typing.cast` or a `Protocol` over `Any`.",
        ),
        fr=(
            "mypy --strict sur tout le code backend",
            "La CI lance `mypy --strict src/ tests/` et échoue à la moindre erreur. Un `# type: "
            "ignore` doit nommer le code d'erreur, comme `# type: ignore[arg-type]`, et "
            "s'accompagner d'un commentaire qui le justifie ; préférer `typing.cast` ou un "
            "`Protocol` à `Any`.",
        ),
        de=(
            "mypy --strict auf dem gesamten Backend-Code",
            "Die CI führt `mypy --strict src/ tests/` aus und schlägt bei jedem Fehler fehl. Ein "
            "`# type: ignore` muss den Fehlercode nennen, etwa `# type: ignore[arg-type]`, und "
            "einen Kommentar mit Begründung tragen; `typing.cast` oder ein `Protocol` sind `Any` "
            "vorzuziehen.",
        ),
        pt=(
            "mypy --strict em todo o código do backend",
            "A CI roda `mypy --strict src/ tests/` e falha em qualquer erro. Um `# type: ignore` "
            "precisa citar o código do erro, como `# type: ignore[arg-type]`, e vir com um "
            "comentário explicando o motivo; prefira `typing.cast` ou um `Protocol` a `Any`.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "The type checker complains about a third-party call that I know is fine; how am "
                "I allowed to silence it?",
                "Le vérificateur de types se plaint d'un appel à une bibliothèque tierce que je "
                "sais correct : comment ai-je le droit de le faire taire ?",
                "Der Typprüfer meckert über einen Aufruf einer Fremdbibliothek, der sicher in "
                "Ordnung ist. Wie darf ich die Meldung unterdrücken?",
                "O verificador de tipos reclama de uma chamada a uma biblioteca de terceiros que "
                "sei que está certa: como posso silenciar o aviso?",
            ),
            _Q(
                "identifier",
                "Is a bare type: ignore allowed?",
                "Un type: ignore sans code est-il autorisé ?",
                "Ist ein nacktes type: ignore erlaubt?",
                "Um type: ignore sem código é permitido?",
            ),
        ),
    ),
    _Concept(
        "cli-json-output",
        "convention",
        "src/payctl/output.py",
        en=(
            "payctl output and exit codes",
            "Every `payctl` command prints human-readable text by default and a single JSON "
            "document with `--json`, always through `emit()` in src/payctl/output.py. Exit codes "
            "are fixed: 0 success, 1 operation failed, 2 bad usage, so that scripts can rely on "
            "them.",
        ),
        fr=(
            "Sortie et codes de retour de payctl",
            "Chaque commande `payctl` affiche du texte lisible par défaut et un unique document "
            "JSON avec `--json`, toujours via `emit()` de src/payctl/output.py. Les codes de "
            "sortie sont fixes : 0 succès, 1 échec de l'opération, 2 mauvaise utilisation, pour "
            "que les scripts puissent s'y fier.",
        ),
        de=(
            "Ausgabe und Exit-Codes von payctl",
            "Jeder `payctl`-Befehl gibt standardmäßig lesbaren Text aus und mit `--json` genau "
            "ein JSON-Dokument, immer über `emit()` in src/payctl/output.py. Die Exit-Codes sind "
            "fest: 0 Erfolg, 1 Vorgang fehlgeschlagen, 2 falsche Bedienung, damit Skripte sich "
            "darauf verlassen können.",
        ),
        pt=(
            "Saída e códigos de retorno do payctl",
            "Todo comando do `payctl` imprime texto legível por padrão e um único documento JSON "
            "com `--json`, sempre por meio de `emit()` em src/payctl/output.py. Os códigos de "
            "saída são fixos: 0 sucesso, 1 falha na operação, 2 uso incorreto, para que scripts "
            "possam confiar neles.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I'm scripting around the ops tool; how do I get machine-readable results and "
                "tell a usage mistake from a real failure?",
                "J'écris un script autour de l'outil d'exploitation : comment obtenir un résultat "
                "lisible par une machine et distinguer une erreur d'utilisation d'un vrai échec ?",
                "Ich schreibe ein Skript um das Betriebstool herum. Wie bekomme ich "
                "maschinenlesbare Ergebnisse, und wie unterscheide ich einen Bedienfehler von "
                "einem echten Fehlschlag?",
                "Estou escrevendo um script em volta da ferramenta de operação: como obtenho um "
                "resultado legível por máquina e diferencio erro de uso de falha real?",
            ),
            _Q(
                "identifier",
                "What does emit() in output.py do?",
                "Que fait emit() dans output.py ?",
                "Was macht emit() in output.py?",
                "O que o emit() do output.py faz?",
            ),
        ),
    ),
    _Concept(
        "test-factories",
        "convention",
        "tests/factories.py",
        en=(
            "Test data comes from factory functions",
            "Build test objects with the factories in tests/factories.py, such as "
            "`make_charge(amount_minor=500)` or `make_refund(charge=charge)`, overriding only the "
            "fields the test cares about. Shared JSON fixture files are not allowed because they "
            "rot silently when the schema changes.",
        ),
        fr=(
            "Les données de test viennent de fonctions fabriques",
            "Construire les objets de test avec les fabriques de tests/factories.py, comme "
            "`make_charge(amount_minor=500)` ou `make_refund(charge=charge)`, en ne surchargeant "
            "que les champs qui comptent pour le test. Les fichiers de fixtures JSON partagés "
            "sont interdits, car ils se périment sans bruit quand le schéma change.",
        ),
        de=(
            "Testdaten kommen aus Factory-Funktionen",
            "Testobjekte werden mit den Factories aus tests/factories.py gebaut, etwa "
            "`make_charge(amount_minor=500)` oder `make_refund(charge=charge)`, und man "
            "überschreibt nur die Felder, auf die es im Test ankommt. Gemeinsame "
            "JSON-Fixture-Dateien sind verboten, weil sie bei Schemaänderungen unbemerkt veralten.",
        ),
        pt=(
            "Dados de teste vêm de funções fábrica",
            "Monte os objetos de teste com as fábricas de tests/factories.py, como "
            "`make_charge(amount_minor=500)` ou `make_refund(charge=charge)`, sobrescrevendo só "
            "os campos que importam para o teste. Arquivos de fixture JSON compartilhados são "
            "proibidos porque ficam desatualizados sem ninguém perceber quando o esquema muda.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "What's the preferred way to get a sample payment object in a test?",
                "Quelle est la bonne façon d'obtenir un paiement d'exemple dans un test ?",
                "Wie komme ich in einem Test am besten an ein Beispiel-Zahlungsobjekt?",
                "Qual é o jeito certo de obter um pagamento de exemplo num teste?",
            ),
            _Q(
                "identifier",
                "Is there a ChargeFactory for tests?",
                "Existe-t-il une ChargeFactory pour les tests ?",
                "Gibt es eine ChargeFactory für Tests?",
                "Existe uma ChargeFactory para os testes?",
            ),
        ),
    ),
    _Concept(
        "cursor-pagination",
        "convention",
        "src/payments/api/pagination.py",
        en=(
            "List endpoints use cursor pagination",
            "Every list endpoint pages with a cursor: `limit` (default 20, max 100) plus "
            "`starting_after=<id>`, and responses carry `has_more`; `paginate()` in "
            "src/payments/api/pagination.py does it. Never add `offset`, because rows inserted "
            "while a client is paging make it skip or repeat items.",
        ),
        fr=(
            "Pagination par curseur sur les listes",
            "Chaque endpoint de liste pagine avec un curseur : `limit` (20 par défaut, 100 au "
            "plus) plus `starting_after=<id>`, et les réponses portent `has_more` ; c'est "
            "`paginate()` de src/payments/api/pagination.py qui s'en charge. Ne jamais ajouter "
            "`offset`, car des lignes insérées pendant qu'un client pagine lui font sauter ou "
            "répéter des éléments.",
        ),
        de=(
            "Listen-Endpunkte mit Cursor-Paginierung",
            "Jeder Listen-Endpunkt blättert per Cursor: `limit` (Standard 20, höchstens 100) plus "
            "`starting_after=<id>`, und Antworten enthalten `has_more`; das erledigt `paginate()` "
            "in src/payments/api/pagination.py. Nie `offset` einführen, weil Zeilen, die während "
            "des Blätterns eingefügt werden, Einträge überspringen oder doppelt erscheinen lassen.",
        ),
        pt=(
            "Endpoints de listagem usam paginação por cursor",
            "Todo endpoint de listagem pagina com cursor: `limit` (padrão 20, máximo 100) mais "
            "`starting_after=<id>`, e as respostas trazem `has_more`; quem faz isso é o "
            "`paginate()` de src/payments/api/pagination.py. Nunca use `offset`, porque linhas "
            "inseridas enquanto o cliente pagina fazem itens pularem ou se repetirem.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "How does a client fetch the next batch of refunds when they don't all fit in one "
                "response?",
                "Comment un client récupère-t-il le lot suivant de remboursements quand ils ne "
                "tiennent pas tous dans une réponse ?",
                "Wie holt ein Client die nächste Ladung Erstattungen, wenn nicht alle in eine "
                "Antwort passen?",
                "Como um cliente busca o próximo lote de reembolsos quando não cabem todos numa "
                "resposta?",
            ),
            _Q(
                "identifier",
                "What does the startingAfter parameter do?",
                "À quoi sert le paramètre startingAfter ?",
                "Wofür ist der Parameter startingAfter da?",
                "Para que serve o parâmetro startingAfter?",
            ),
        ),
    ),
    _Concept(
        "clock-injection",
        "convention",
        "src/payments/clock.py",
        en=(
            "Read the time through payments.clock",
            "Get the current time from `payments.clock.now()`, which returns an aware UTC "
            "`datetime`, never from `datetime.now()` or `time.time()`. Tests freeze it with the "
            "`frozen_clock` fixture, which is what keeps time-dependent tests deterministic.",
        ),
        fr=(
            "Lire l'heure via payments.clock",
            "L'heure courante s'obtient avec `payments.clock.now()`, qui renvoie un `datetime` "
            "UTC avec fuseau, jamais avec `datetime.now()` ni `time.time()`. Les tests la figent "
            "avec la fixture `frozen_clock`, et c'est ce qui rend déterministes les tests qui "
            "dépendent du temps.",
        ),
        de=(
            "Die Uhrzeit über payments.clock lesen",
            "Die aktuelle Zeit kommt aus `payments.clock.now()`, das ein zeitzonenbewusstes "
            "UTC-`datetime` liefert, nie aus `datetime.now()` oder `time.time()`. Tests frieren "
            "sie mit der Fixture `frozen_clock` ein; deshalb bleiben zeitabhängige Tests "
            "deterministisch.",
        ),
        pt=(
            "Leia a hora por payments.clock",
            "A hora atual vem de `payments.clock.now()`, que devolve um `datetime` UTC com fuso, "
            "e nunca de `datetime.now()` ou `time.time()`. Os testes a congelam com a fixture "
            "`frozen_clock`, e é isso que mantém determinísticos os testes que dependem do tempo.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "My test for expiring authorisations passes or fails depending on the time of "
                "day; how should the code find out what time it is?",
                "Mon test sur l'expiration des autorisations passe ou échoue selon l'heure de la "
                "journée : comment le code doit-il savoir quelle heure il est ?",
                "Mein Test für ablaufende Autorisierungen ist je nach Tageszeit grün oder rot. "
                "Wie soll der Code herausfinden, wie spät es ist?",
                "Meu teste de expiração de autorizações passa ou falha conforme a hora do dia: "
                "como o código deve descobrir que horas são?",
            ),
            _Q(
                "identifier",
                "Can I call datetime.now() in service code?",
                "Puis-je appeler datetime.now() dans le code du service ?",
                "Darf ich im Code des Dienstes datetime.now() aufrufen?",
                "Posso chamar datetime.now() no código do serviço?",
            ),
        ),
    ),
    # --- pitfalls ----------------------------------------------------------------------------
    _Concept(
        "bulk-refund-dry-run",
        "pitfall",
        "src/payctl/refunds.py",
        en=(
            "Always dry-run bulk refunds first",
            "Never run `payctl refunds bulk --file <csv>` without a `--dry-run` pass first: the "
            "real run sends every refund to the processor immediately, and refunds cannot be "
            "reversed. Check the dry-run total against the finance ticket before dropping the "
            "flag; see src/payctl/refunds.py.",
        ),
        fr=(
            "Toujours simuler d'abord les remboursements en masse",
            "Ne jamais lancer `payctl refunds bulk --file <csv>` sans un passage préalable avec "
            "`--dry-run` : l'exécution réelle envoie immédiatement chaque remboursement au "
            "processeur, et un remboursement ne s'annule pas. Comparer le total de la simulation "
            "avec le ticket de la finance avant de retirer l'option ; voir src/payctl/refunds.py.",
        ),
        de=(
            "Sammelerstattungen immer zuerst als Probelauf",
            "`payctl refunds bulk --file <csv>` nie ohne vorherigen Lauf mit `--dry-run` "
            "ausführen: Der echte Lauf schickt jede Erstattung sofort an den Abwickler, und "
            "Erstattungen lassen sich nicht rückgängig machen. Die Summe des Probelaufs mit dem "
            "Ticket der Finanzabteilung abgleichen, bevor man die Option weglässt; siehe "
            "src/payctl/refunds.py.",
        ),
        pt=(
            "Sempre simule antes os reembolsos em lote",
            "Nunca rode `payctl refunds bulk --file <csv>` sem passar antes por `--dry-run`: a "
            "execução real manda cada reembolso na hora para o processador, e reembolso não se "
            "desfaz. Confira o total da simulação com o ticket do financeiro antes de tirar a "
            "flag; veja src/payctl/refunds.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Finance sent me a spreadsheet of 300 customers who should get their money back; "
                "is there anything I must do before running it?",
                "La finance m'a envoyé un tableur de 300 clients à qui il faut rendre leur argent "
                ": y a-t-il quelque chose à faire absolument avant de le lancer ?",
                "Die Finanzabteilung hat mir eine Tabelle mit 300 Kunden geschickt, die ihr Geld "
                "zurückbekommen sollen. Was muss ich vorher unbedingt tun?",
                "O financeiro me mandou uma planilha com 300 clientes que devem receber o "
                "dinheiro de volta: tem algo que eu preciso fazer antes de rodar?",
            ),
            _Q(
                "identifier",
                "What does --dry-run do on payctl refunds?",
                "Que fait --dry-run sur payctl refunds ?",
                "Was bewirkt --dry-run bei payctl refunds?",
                "O que o --dry-run faz no payctl refunds?",
            ),
        ),
    ),
    _Concept(
        "webhook-raw-body",
        "pitfall",
        "src/payments/webhooks/verify.py",
        en=(
            "Verify webhook signatures on the raw body",
            "Check the processor's `Processor-Signature` header with `verify_signature(raw_body, "
            "header, PAYMENTS_WEBHOOK_SECRET)` on the exact bytes received, before parsing the "
            "JSON. Parsing and re-serialising changes key order and whitespace, so the HMAC never "
            "matches; see src/payments/webhooks/verify.py.",
        ),
        fr=(
            "Vérifier la signature des webhooks sur le corps brut",
            "Contrôler l'en-tête `Processor-Signature` du processeur avec "
            "`verify_signature(raw_body, header, PAYMENTS_WEBHOOK_SECRET)` sur les octets exacts "
            "reçus, avant d'analyser le JSON. Analyser puis resérialiser change l'ordre des clés "
            "et les espaces, et le HMAC ne correspond plus jamais ; voir "
            "src/payments/webhooks/verify.py.",
        ),
        de=(
            "Webhook-Signaturen über den Rohinhalt prüfen",
            "Den Header `Processor-Signature` des Abwicklers mit `verify_signature(raw_body, "
            "header, PAYMENTS_WEBHOOK_SECRET)` über genau die empfangenen Bytes prüfen, bevor das "
            "JSON geparst wird. Parsen und erneutes Serialisieren ändert Schlüsselreihenfolge und "
            "Leerzeichen, dann passt der HMAC nie; siehe src/payments/webhooks/verify.py.",
        ),
        pt=(
            "Verifique a assinatura do webhook no corpo bruto",
            "Confira o cabeçalho `Processor-Signature` do processador com "
            "`verify_signature(raw_body, header, PAYMENTS_WEBHOOK_SECRET)` sobre os bytes exatos "
            "recebidos, antes de fazer o parse do JSON. Fazer o parse e serializar de novo muda a "
            "ordem das chaves e os espaços, e o HMAC nunca bate; veja "
            "src/payments/webhooks/verify.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Why does authenticating the processor's callbacks fail even though the shared "
                "secret is correct?",
                "Pourquoi l'authentification des rappels du processeur échoue-t-elle alors que le "
                "secret partagé est correct ?",
                "Warum schlägt die Echtheitsprüfung der Callbacks vom Abwickler fehl, obwohl das "
                "gemeinsame Geheimnis stimmt?",
                "Por que a autenticação dos callbacks do processador falha mesmo com o segredo "
                "compartilhado correto?",
            ),
            _Q(
                "identifier",
                "Where is PAYMENTS_WEBHOOK_SECRET used?",
                "Où PAYMENTS_WEBHOOK_SECRET est-il utilisé ?",
                "Wo wird PAYMENTS_WEBHOOK_SECRET verwendet?",
                "Onde a PAYMENTS_WEBHOOK_SECRET é usada?",
            ),
        ),
    ),
    _Concept(
        "append-only-ledger",
        "pitfall",
        "src/payments/ledger/entries.py",
        en=(
            "Never update ledger rows",
            "The `ledger_entries` table is append-only: never `UPDATE` or `DELETE` a row, not "
            "even to fix a wrong amount; post a reversing entry with `Ledger.reverse(entry_id, "
            "reason)` and then the correct one. A trigger rejects updates in production, and "
            "auditors rely on the full history; see src/payments/ledger/entries.py.",
        ),
        fr=(
            "Ne jamais modifier les lignes du grand livre",
            "La table `ledger_entries` est en ajout seul : ne jamais faire d'`UPDATE` ni de "
            "`DELETE` sur une ligne, même pour corriger un montant faux ; passer une écriture "
            "d'extourne avec `Ledger.reverse(entry_id, reason)`, puis la bonne écriture. Un "
            "trigger rejette les mises à jour en production, et les auditeurs s'appuient sur "
            "l'historique complet ; voir src/payments/ledger/entries.py.",
        ),
        de=(
            "Hauptbuchzeilen nie ändern",
            "Die Tabelle `ledger_entries` ist nur zum Anhängen da: nie eine Zeile per `UPDATE` "
            "oder `DELETE` ändern, auch nicht, um einen falschen Betrag zu korrigieren, sondern "
            "mit `Ledger.reverse(entry_id, reason)` eine Stornobuchung und danach die richtige "
            "Buchung anlegen. In Produktion weist ein Trigger Updates ab, und die Prüfer "
            "verlassen sich auf die vollständige Historie; siehe src/payments/ledger/entries.py.",
        ),
        pt=(
            "Nunca altere linhas do livro-razão",
            "A tabela `ledger_entries` só aceita inserções: nunca faça `UPDATE` nem `DELETE` numa "
            "linha, nem para corrigir um valor errado; lance um estorno com "
            "`Ledger.reverse(entry_id, reason)` e depois o lançamento correto. Um trigger rejeita "
            "atualizações em produção, e os auditores dependem do histórico completo; veja "
            "src/payments/ledger/entries.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "A booking was recorded with the wrong amount; how do I fix it in the accounting "
                "tables?",
                "Une écriture a été enregistrée avec une mauvaise somme : comment la rectifier "
                "dans les tables comptables ?",
                "Eine Buchung wurde mit falscher Summe erfasst. Wie berichtige ich das in den "
                "Buchhaltungstabellen?",
                "Um lançamento foi registrado com a quantia errada: como acerto isso nas tabelas "
                "contábeis?",
            ),
            _Q(
                "identifier",
                "When should I use ledger.reverse()?",
                "Quand faut-il utiliser ledger.reverse() ?",
                "Wann verwende ich ledger.reverse()?",
                "Quando devo usar ledger.reverse()?",
            ),
        ),
    ),
    _Concept(
        "concurrent-index-migrations",
        "pitfall",
        "docs/runbooks/migrations.md",
        en=(
            "Create indexes concurrently on big tables",
            "On large tables such as `charges`, never add an index in a plain migration: it "
            "blocks writes for minutes and checkouts time out. Use `op.create_index(..., "
            "postgresql_concurrently=True)` inside `op.get_context().autocommit_block()`, in a "
            "migration of its own; see docs/runbooks/migrations.md.",
        ),
        fr=(
            "Créer les index en mode concurrent sur les grosses tables",
            "Sur les grosses tables comme `charges`, ne jamais ajouter un index dans une "
            "migration ordinaire : cela bloque les écritures pendant des minutes et les paiements "
            "en cours expirent. Utiliser `op.create_index(..., postgresql_concurrently=True)` "
            "dans `op.get_context().autocommit_block()`, au sein d'une migration dédiée ; voir "
            "docs/runbooks/migrations.md.",
        ),
        de=(
            "Indizes auf großen Tabellen nebenläufig anlegen",
            "Auf großen Tabellen wie `charges` nie einen Index in einer normalen Migration "
            "anlegen: Das blockiert Schreibzugriffe minutenlang, und Checkouts laufen in "
            "Timeouts. Stattdessen `op.create_index(..., postgresql_concurrently=True)` innerhalb "
            "von `op.get_context().autocommit_block()` in einer eigenen Migration verwenden; "
            "siehe docs/runbooks/migrations.md.",
        ),
        pt=(
            "Crie índices de forma concorrente em tabelas grandes",
            "Em tabelas grandes como `charges`, nunca crie um índice numa migração comum: isso "
            "bloqueia as escritas por minutos e os checkouts estouram o tempo limite. Use "
            "`op.create_index(..., postgresql_concurrently=True)` dentro de "
            "`op.get_context().autocommit_block()`, numa migração separada; veja "
            "docs/runbooks/migrations.md.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I want to speed up a query on one of our busiest tables; what do I need to watch "
                "out for so that production doesn't stall?",
                "Je veux accélérer une requête sur une de nos tables les plus sollicitées : à "
                "quoi faire attention pour ne pas bloquer la prod ?",
                "Ich will eine Abfrage auf einer unserer meistgenutzten Tabellen beschleunigen. "
                "Worauf muss ich achten, damit die Produktion nicht hängen bleibt?",
                "Quero acelerar uma consulta numa das nossas tabelas mais movimentadas: com o que "
                "devo tomar cuidado para não travar a produção?",
            ),
            _Q(
                "identifier",
                "Why do we pass postgresql_concurrently=True?",
                "Pourquoi passe-t-on postgresql_concurrently=True ?",
                "Warum übergeben wir postgresql_concurrently=True?",
                "Por que passamos postgresql_concurrently=True?",
            ),
        ),
    ),
    _Concept(
        "pull-request-target-secrets",
        "pitfall",
        ".github/workflows/ci.yml",
        en=(
            "Do not run fork code under pull_request_target",
            "Never check out the pull request's head in a workflow triggered by "
            "`pull_request_target`: those runs get repository secrets such as "
            "`PROCESSOR_API_KEY`, so code from a fork could steal them. Tests for outside "
            "contributions run under plain `pull_request`, which has no secrets; see "
            ".github/workflows/ci.yml.",
        ),
        fr=(
            "Ne pas exécuter le code d'un fork sous pull_request_target",
            "Ne jamais récupérer la tête de la pull request dans un workflow déclenché par "
            "`pull_request_target` : ces exécutions reçoivent les secrets du dépôt comme "
            "`PROCESSOR_API_KEY`, et le code d'un fork pourrait les voler. Les tests des "
            "contributions externes tournent sous un simple `pull_request`, sans secrets ; voir "
            ".github/workflows/ci.yml.",
        ),
        de=(
            "Fork-Code nicht unter pull_request_target ausführen",
            "In einem Workflow, der durch `pull_request_target` ausgelöst wird, nie den Head des "
            "Pull Requests auschecken: Solche Läufe bekommen Repository-Secrets wie "
            "`PROCESSOR_API_KEY`, und Code aus einem Fork könnte sie abgreifen. Tests für externe "
            "Beiträge laufen unter einfachem `pull_request` ohne Secrets; siehe "
            ".github/workflows/ci.yml.",
        ),
        pt=(
            "Não rode código de fork em pull_request_target",
            "Nunca faça checkout do head do pull request num workflow disparado por "
            "`pull_request_target`: essas execuções recebem segredos do repositório como "
            "`PROCESSOR_API_KEY`, e o código de um fork poderia roubá-los. Os testes de "
            "contribuições externas rodam num `pull_request` comum, sem segredos; veja "
            ".github/workflows/ci.yml.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Is it safe to let CI run the tests on contributions from people outside the "
                "company?",
                "Est-il sûr de laisser la CI lancer les tests sur les contributions de personnes "
                "extérieures à l'entreprise ?",
                "Ist es sicher, die CI die Tests für Beiträge von Leuten außerhalb der Firma "
                "ausführen zu lassen?",
                "É seguro deixar a CI rodar os testes em contribuições de pessoas de fora da "
                "empresa?",
            ),
            _Q(
                "identifier",
                "What is the risk with pull_request_target?",
                "Quel est le risque avec pull_request_target ?",
                "Was ist das Risiko bei pull_request_target?",
                "Qual é o risco com pull_request_target?",
            ),
        ),
    ),
    _Concept(
        "live-key-guard",
        "pitfall",
        "src/payments/processor/client.py",
        en=(
            "Live processor keys are refused outside production",
            "`ProcessorClient` refuses to start when `PROCESSOR_API_KEY` begins with `sk_live_` "
            "and `PAYMENTS_ENV` is not `production`. Never work around it by unsetting "
            "`PAYMENTS_ENV` locally: use an `sk_test_` key against the sandbox, where only the "
            "documented test card numbers work; see src/payments/processor/client.py.",
        ),
        fr=(
            "Les clés live du processeur sont refusées hors production",
            "`ProcessorClient` refuse de démarrer quand `PROCESSOR_API_KEY` commence par "
            "`sk_live_` et que `PAYMENTS_ENV` ne vaut pas `production`. Ne jamais contourner ce "
            "garde-fou en supprimant `PAYMENTS_ENV` en local : utiliser une clé `sk_test_` sur le "
            "bac à sable, où seuls les numéros de carte de test documentés fonctionnent ; voir "
            "src/payments/processor/client.py.",
        ),
        de=(
            "Live-Schlüssel des Abwicklers außerhalb der Produktion gesperrt",
            "`ProcessorClient` startet nicht, wenn `PROCESSOR_API_KEY` mit `sk_live_` beginnt und "
            "`PAYMENTS_ENV` nicht `production` ist. Das nie lokal umgehen, indem man "
            "`PAYMENTS_ENV` entfernt, sondern einen `sk_test_`-Schlüssel gegen die Sandbox "
            "verwenden, in der nur die dokumentierten Testkartennummern funktionieren; siehe "
            "src/payments/processor/client.py.",
        ),
        pt=(
            "Chaves live do processador são recusadas fora da produção",
            "O `ProcessorClient` se recusa a iniciar quando a `PROCESSOR_API_KEY` começa com "
            "`sk_live_` e a `PAYMENTS_ENV` não é `production`. Nunca contorne isso removendo a "
            "`PAYMENTS_ENV` na sua máquina: use uma chave `sk_test_` no sandbox, onde só "
            "funcionam os números de cartão de teste documentados; veja "
            "src/payments/processor/client.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "My local server won't boot since I pasted the key from the production vault; "
                "what am I doing wrong?",
                "Mon serveur local ne démarre plus depuis que j'ai collé la clé du coffre de "
                "production : qu'est-ce que je fais de travers ?",
                "Mein lokaler Server startet nicht mehr, seit ich den Schlüssel aus dem "
                "Produktions-Tresor eingefügt habe. Was mache ich falsch?",
                "Meu servidor local não sobe desde que colei a chave do cofre de produção: o que "
                "estou fazendo de errado?",
            ),
            _Q(
                "identifier",
                "What does ProcessorClient check when it starts?",
                "Que vérifie ProcessorClient au démarrage ?",
                "Was prüft ProcessorClient beim Start?",
                "O que o ProcessorClient verifica ao iniciar?",
            ),
        ),
    ),
    _Concept(
        "settlement-cutoff-timezone",
        "pitfall",
        "src/payments/settlement/cutoff.py",
        en=(
            "Settlement days end at midnight Paris time",
            "The processor closes a settlement day at 00:00 Europe/Paris, not at UTC midnight, so "
            "`settlement_date_for(ts)` converts to that zone before taking the date. Grouping by "
            "the UTC date puts late-evening payments into the wrong daily report; see "
            "src/payments/settlement/cutoff.py.",
        ),
        fr=(
            "La journée de règlement se termine à minuit, heure de Paris",
            "Le processeur clôt une journée de règlement à 00:00 Europe/Paris, pas à minuit UTC : "
            "`settlement_date_for(ts)` convertit donc dans ce fuseau avant de prendre la date. "
            "Regrouper par date UTC range les paiements de fin de soirée dans le mauvais rapport "
            "quotidien ; voir src/payments/settlement/cutoff.py.",
        ),
        de=(
            "Abrechnungstage enden um Mitternacht Pariser Zeit",
            "Der Abwickler schließt einen Abrechnungstag um 00:00 Europe/Paris, nicht um "
            "Mitternacht UTC; daher rechnet `settlement_date_for(ts)` erst in diese Zone um und "
            "nimmt dann das Datum. Wer nach dem UTC-Datum gruppiert, ordnet Zahlungen vom späten "
            "Abend dem falschen Tagesbericht zu; siehe src/payments/settlement/cutoff.py.",
        ),
        pt=(
            "O dia de liquidação termina à meia-noite de Paris",
            "O processador fecha o dia de liquidação às 00:00 Europe/Paris, e não à meia-noite "
            "UTC, por isso `settlement_date_for(ts)` converte para esse fuso antes de pegar a "
            "data. Agrupar pela data UTC joga pagamentos do fim da noite no relatório diário "
            "errado; veja src/payments/settlement/cutoff.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Why don't our daily totals match the processor's for payments made just before "
                "midnight?",
                "Pourquoi nos totaux journaliers ne correspondent-ils pas à ceux du processeur "
                "pour les paiements faits juste avant minuit ?",
                "Warum stimmen unsere Tagessummen bei Zahlungen kurz vor Mitternacht nicht mit "
                "denen des Abwicklers überein?",
                "Por que nossos totais diários não batem com os do processador para pagamentos "
                "feitos pouco antes da meia-noite?",
            ),
            _Q(
                "identifier",
                "What does settlement_date_for return?",
                "Que renvoie settlement_date_for ?",
                "Was liefert settlement_date_for zurück?",
                "O que o settlement_date_for retorna?",
            ),
        ),
    ),
    _Concept(
        "card-data-redaction",
        "pitfall",
        "src/payments/redaction.py",
        en=(
            "Never log card numbers or CVCs",
            "Full card numbers (PAN) and CVC codes must never reach logs, traces or error "
            "reports: pass processor payloads through `redact()` first, which keeps only the last "
            "four digits. One leaked PAN puts the whole log pipeline in PCI DSS scope; see "
            "src/payments/redaction.py.",
        ),
        fr=(
            "Ne jamais journaliser de numéros de carte ni de CVC",
            "Les numéros de carte complets (PAN) et les codes CVC ne doivent jamais atterrir dans "
            "les logs, les traces ou les rapports d'erreur : faire d'abord passer les données du "
            "processeur par `redact()`, qui ne garde que les quatre derniers chiffres. Un seul "
            "PAN qui fuit fait entrer toute la chaîne de logs dans le périmètre PCI DSS ; voir "
            "src/payments/redaction.py.",
        ),
        de=(
            "Nie Kartennummern oder CVCs loggen",
            "Vollständige Kartennummern (PAN) und CVC-Codes dürfen nie in Logs, Traces oder "
            "Fehlerberichten landen: Daten vom Abwickler zuerst durch `redact()` schicken, das "
            "nur die letzten vier Ziffern behält. Eine einzige durchgesickerte PAN zieht die "
            "gesamte Log-Pipeline in den Geltungsbereich von PCI DSS; siehe "
            "src/payments/redaction.py.",
        ),
        pt=(
            "Nunca registre números de cartão ou CVC em log",
            "Números completos de cartão (PAN) e códigos CVC nunca podem chegar a logs, traces ou "
            "relatórios de erro: passe antes os dados do processador pelo `redact()`, que mantém "
            "só os quatro últimos dígitos. Um único PAN vazado coloca todo o pipeline de logs no "
            "escopo do PCI DSS; veja src/payments/redaction.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Is it OK to dump the whole request from the card processor while debugging a "
                "failed charge?",
                "Puis-je afficher toute la requête du processeur de cartes pendant que je débogue "
                "un paiement échoué ?",
                "Darf ich beim Debuggen einer fehlgeschlagenen Zahlung die komplette Anfrage vom "
                "Kartenabwickler ausgeben?",
                "Posso imprimir a requisição inteira do processador de cartões enquanto depuro "
                "uma cobrança que falhou?",
            ),
            _Q(
                "identifier",
                "What does redact() keep?",
                "Que conserve redact() ?",
                "Was behält redact()?",
                "O que o redact() mantém?",
            ),
        ),
    ),
    _Concept(
        "pgbouncer-transaction-mode",
        "pitfall",
        "deploy/pgbouncer.ini",
        en=(
            "PgBouncer runs in transaction mode",
            "Production connects through PgBouncer in transaction pooling mode, so session state "
            "does not survive between transactions: no `SET` outside a transaction, no "
            "session-level advisory locks, and server-side prepared statements stay disabled "
            "(`prepare_threshold=None`). Keep `PAYMENTS_DB_POOL_SIZE` at 10 or less per worker; "
            "see deploy/pgbouncer.ini.",
        ),
        fr=(
            "PgBouncer tourne en mode transaction",
            "En production, la connexion passe par PgBouncer en mode de pooling par transaction : "
            "l'état de session ne survit pas d'une transaction à l'autre, donc pas de `SET` hors "
            "transaction, pas de verrous consultatifs de session, et les requêtes préparées côté "
            "serveur restent désactivées (`prepare_threshold=None`). Garder "
            "`PAYMENTS_DB_POOL_SIZE` à 10 au plus par worker ; voir deploy/pgbouncer.ini.",
        ),
        de=(
            "PgBouncer läuft im Transaktionsmodus",
            "In Produktion geht die Verbindung über PgBouncer im Transaction-Pooling-Modus, "
            "Sitzungszustand überlebt also nicht über Transaktionen hinweg: kein `SET` außerhalb "
            "einer Transaktion, keine Advisory Locks auf Sitzungsebene, und serverseitige "
            "Prepared Statements bleiben aus (`prepare_threshold=None`). `PAYMENTS_DB_POOL_SIZE` "
            "höchstens auf 10 pro Worker setzen; siehe deploy/pgbouncer.ini.",
        ),
        pt=(
            "O PgBouncer roda em modo transação",
            "Em produção a conexão passa pelo PgBouncer em modo de pool por transação, então o "
            "estado de sessão não sobrevive entre transações: nada de `SET` fora de transação, "
            "nada de advisory locks de sessão, e prepared statements no servidor ficam desligados "
            "(`prepare_threshold=None`). Mantenha `PAYMENTS_DB_POOL_SIZE` em no máximo 10 por "
            "worker; veja deploy/pgbouncer.ini.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I want to take a database-wide lock so that only one worker runs the nightly "
                "job; will that work in prod?",
                "Je veux poser un verrou au niveau de la base pour qu'un seul worker exécute la "
                "tâche de nuit : est-ce que ça marchera en prod ?",
                "Ich will eine datenbankweite Sperre setzen, damit nur ein Worker den nächtlichen "
                "Job ausführt. Funktioniert das in Produktion?",
                "Quero pegar um lock no banco para que só um worker rode o job noturno: isso "
                "funciona em produção?",
            ),
            _Q(
                "identifier",
                "What should PAYMENTS_DB_POOL_SIZE be set to?",
                "À combien régler PAYMENTS_DB_POOL_SIZE ?",
                "Auf welchen Wert setze ich PAYMENTS_DB_POOL_SIZE?",
                "Com que valor configuro a PAYMENTS_DB_POOL_SIZE?",
            ),
        ),
    ),
    _Concept(
        "vite-env-secrets",
        "pitfall",
        "web/.env.example",
        en=(
            "No secrets in VITE_ variables",
            "Vite inlines every `VITE_`-prefixed variable into the JavaScript bundle that "
            "browsers download, so never put a key or token in one (for example "
            "`VITE_PROCESSOR_SECRET`). Only public values such as `VITE_API_BASE_URL` belong "
            "there, anything secret stays on the server; see web/.env.example.",
        ),
        fr=(
            "Pas de secrets dans les variables VITE_",
            "Vite injecte chaque variable préfixée par `VITE_` dans le bundle JavaScript que "
            "téléchargent les navigateurs : ne jamais y mettre de clé ni de jeton (par exemple "
            "`VITE_PROCESSOR_SECRET`). Seules des valeurs publiques comme `VITE_API_BASE_URL` y "
            "ont leur place, tout ce qui est secret reste côté serveur ; voir web/.env.example.",
        ),
        de=(
            "Keine Geheimnisse in VITE_-Variablen",
            "Vite schreibt jede Variable mit dem Präfix `VITE_` direkt in das JavaScript-Bundle, "
            "das Browser herunterladen, also nie einen Schlüssel oder ein Token hineinlegen (etwa "
            "`VITE_PROCESSOR_SECRET`). Dort gehören nur öffentliche Werte wie `VITE_API_BASE_URL` "
            "hin, alles Geheime bleibt auf dem Server; siehe web/.env.example.",
        ),
        pt=(
            "Nada de segredos em variáveis VITE_",
            "O Vite embute toda variável com prefixo `VITE_` no bundle JavaScript que os "
            "navegadores baixam, então nunca coloque uma chave ou token numa delas (por exemplo "
            "`VITE_PROCESSOR_SECRET`). Só valores públicos como `VITE_API_BASE_URL` ficam ali, "
            "tudo o que é secreto fica no servidor; veja web/.env.example.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "Can the front end read an API key from an environment variable at build time?",
                "Le front peut-il lire une clé d'API depuis une variable d'environnement au "
                "moment du build ?",
                "Darf das Frontend beim Build einen API-Schlüssel aus einer Umgebungsvariable "
                "lesen?",
                "O front-end pode ler uma chave de API de uma variável de ambiente na hora do "
                "build?",
            ),
            _Q(
                "identifier",
                "Can I add a VITE_PROCESSOR_KEY variable to .env?",
                "Puis-je ajouter une variable VITE_PROCESSOR_KEY dans .env ?",
                "Darf ich eine Variable VITE_PROCESSOR_KEY in .env anlegen?",
                "Posso adicionar uma variável VITE_PROCESSOR_KEY no .env?",
            ),
        ),
    ),
    _Concept(
        "async-session-sharing",
        "pitfall",
        "src/payments/db/session.py",
        en=(
            "Do not share an AsyncSession across tasks",
            "A SQLAlchemy `AsyncSession` is not safe for concurrent use: never pass one session "
            "to several coroutines run with `asyncio.gather()`, or their queries interleave and "
            "fail with `InterfaceError`. Open one session per task with `async with "
            "session_scope() as session:`; see src/payments/db/session.py.",
        ),
        fr=(
            "Ne pas partager une AsyncSession entre tâches",
            "Une `AsyncSession` SQLAlchemy ne supporte pas l'usage concurrent : ne jamais passer "
            "la même session à plusieurs coroutines lancées avec `asyncio.gather()`, sinon leurs "
            "requêtes s'entremêlent et échouent avec `InterfaceError`. Ouvrir une session par "
            "tâche avec `async with session_scope() as session:` ; voir "
            "src/payments/db/session.py.",
        ),
        de=(
            "Eine AsyncSession nicht zwischen Tasks teilen",
            "Eine SQLAlchemy-`AsyncSession` ist nicht für nebenläufige Nutzung gedacht: nie "
            "dieselbe Session an mehrere Koroutinen übergeben, die mit `asyncio.gather()` laufen, "
            "sonst verschränken sich ihre Abfragen und scheitern mit `InterfaceError`. Pro Task "
            "eine eigene Session mit `async with session_scope() as session:` öffnen; siehe "
            "src/payments/db/session.py.",
        ),
        pt=(
            "Não compartilhe uma AsyncSession entre tarefas",
            "Uma `AsyncSession` do SQLAlchemy não suporta uso concorrente: nunca passe a mesma "
            "sessão para várias corrotinas rodando com `asyncio.gather()`, senão as consultas "
            "delas se misturam e falham com `InterfaceError`. Abra uma sessão por tarefa com "
            "`async with session_scope() as session:`; veja src/payments/db/session.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "I ran three queries in parallel to speed up the receipts page and now they crash "
                "at random; what's wrong?",
                "J'ai lancé trois requêtes en parallèle pour accélérer la page des reçus, et "
                "maintenant elles plantent au hasard : qu'est-ce qui ne va pas ?",
                "Ich habe drei Abfragen parallel gestartet, um die Belegseite zu beschleunigen, "
                "und jetzt stürzen sie zufällig ab. Was ist falsch?",
                "Rodei três consultas em paralelo para acelerar a página de recibos e agora elas "
                "falham aleatoriamente: o que está errado?",
            ),
            _Q(
                "identifier",
                "What is SessionScope used for in the db package?",
                "À quoi sert SessionScope dans le paquet db ?",
                "Wofür wird SessionScope im db-Paket verwendet?",
                "Para que serve o SessionScope no pacote db?",
            ),
        ),
    ),
    _Concept(
        "zero-decimal-currencies",
        "pitfall",
        "web/src/lib/money.ts",
        en=(
            "Format amounts with formatMoney, never divide by 100",
            "Never divide `amount_minor` by 100 in the dashboard: JPY and KRW have no minor unit, "
            "so ¥1,000 would show as ¥10. Use `formatMoney(amountMinor, currency)`, which asks "
            "`Intl.NumberFormat` how many decimals the currency has; see web/src/lib/money.ts.",
        ),
        fr=(
            "Formater les montants avec formatMoney, jamais en divisant par 100",
            "Ne jamais diviser `amount_minor` par 100 dans le tableau de bord : le JPY et le KRW "
            "n'ont pas d'unité mineure, et 1 000 ¥ s'afficheraient 10 ¥. Utiliser "
            "`formatMoney(amountMinor, currency)`, qui demande à `Intl.NumberFormat` le nombre de "
            "décimales de la devise ; voir web/src/lib/money.ts.",
        ),
        de=(
            "Beträge mit formatMoney formatieren, nie durch 100 teilen",
            "`amount_minor` im Dashboard nie durch 100 teilen: JPY und KRW haben keine "
            "Untereinheit, 1.000 ¥ würden als 10 ¥ angezeigt. Stattdessen "
            "`formatMoney(amountMinor, currency)` verwenden, das `Intl.NumberFormat` nach den "
            "Nachkommastellen der Währung fragt; siehe web/src/lib/money.ts.",
        ),
        pt=(
            "Formate valores com formatMoney, nunca dividindo por 100",
            "Nunca divida `amount_minor` por 100 no painel: JPY e KRW não têm unidade menor, e ¥ "
            "1.000 apareceria como ¥ 10. Use `formatMoney(amountMinor, currency)`, que pergunta "
            "ao `Intl.NumberFormat` quantas casas decimais a moeda tem; veja web/src/lib/money.ts.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "A Japanese merchant says their totals look a hundred times too small on screen; "
                "what's going on?",
                "Un marchand japonais dit que ses totaux s'affichent cent fois trop petits à "
                "l'écran : que se passe-t-il ?",
                "Ein japanischer Händler sagt, seine Summen werden hundertmal zu klein angezeigt. "
                "Was ist da los?",
                "Um lojista japonês diz que os totais aparecem cem vezes menores na tela: o que "
                "está acontecendo?",
            ),
            _Q(
                "identifier",
                "Where is format_money defined for the web app?",
                "Où est définie format_money pour l'appli web ?",
                "Wo ist format_money für die Web-App definiert?",
                "Onde fica a format_money do app web?",
            ),
        ),
    ),
    _Concept(
        "webhook-event-ordering",
        "pitfall",
        "src/payments/webhooks/handlers.py",
        en=(
            "Incoming processor events can arrive twice or out of order",
            "Never assume processor events arrive once and in order: the same event can come "
            "twice, and `charge.refunded` can land before `charge.succeeded`. Handlers skip an "
            "`event.id` already in `processed_events` and ignore events whose `created` is older "
            "than the payment's last change; see src/payments/webhooks/handlers.py.",
        ),
        fr=(
            "Les événements entrants du processeur peuvent arriver en double ou dans le désordre",
            "Ne jamais supposer que les événements du processeur arrivent une seule fois et dans "
            "l'ordre : le même événement peut venir deux fois, et `charge.refunded` peut précéder "
            "`charge.succeeded`. Les handlers ignorent un `event.id` déjà présent dans "
            "`processed_events` ainsi que les événements dont `created` est antérieur à la "
            "dernière modification du paiement ; voir src/payments/webhooks/handlers.py.",
        ),
        de=(
            "Eingehende Ereignisse des Abwicklers kommen doppelt oder ungeordnet",
            "Nie davon ausgehen, dass Ereignisse des Abwicklers genau einmal und in Reihenfolge "
            "ankommen: Dasselbe Ereignis kann zweimal kommen, und `charge.refunded` kann vor "
            "`charge.succeeded` eintreffen. Die Handler überspringen eine `event.id`, die schon "
            "in `processed_events` steht, und ignorieren Ereignisse, deren `created` älter ist "
            "als die letzte Änderung der Zahlung; siehe src/payments/webhooks/handlers.py.",
        ),
        pt=(
            "Eventos recebidos do processador podem chegar duplicados ou fora de ordem",
            "Nunca suponha que os eventos do processador chegam uma só vez e em ordem: o mesmo "
            "evento pode vir duas vezes, e `charge.refunded` pode chegar antes de "
            "`charge.succeeded`. Os handlers pulam um `event.id` que já está em "
            "`processed_events` e ignoram eventos cujo `created` seja anterior à última mudança "
            "do pagamento; veja src/payments/webhooks/handlers.py.",
        ),
        questions=(
            _Q(
                "paraphrase",
                "We got a refund notification for a payment we still think is pending; how should "
                "the handler cope?",
                "On a reçu une notification de remboursement pour un paiement qu'on croit encore "
                "en attente : comment le handler doit-il réagir ?",
                "Wir haben eine Erstattungsmeldung für eine Zahlung bekommen, die bei uns noch "
                "als ausstehend gilt. Wie soll der Handler damit umgehen?",
                "Recebemos uma notificação de reembolso de um pagamento que para nós ainda está "
                "pendente: como o handler deve lidar com isso?",
            ),
            _Q(
                "identifier",
                "What is the processed_events table for?",
                "À quoi sert la table processed_events ?",
                "Wofür ist die Tabelle processed_events da?",
                "Para que serve a tabela processed_events?",
            ),
        ),
    ),
    # --- superseded: each replaced by the current concept named in superseded_by -------------
    _Concept(
        "jenkins-deploy",
        "decision",
        "ci/Jenkinsfile",
        en=(
            "Deploys run on Jenkins",
            "Production is deployed by the `payments-deploy` Jenkins job defined in "
            "ci/Jenkinsfile; start it by hand with the release version as a parameter once CI has "
            "passed.",
        ),
        fr=(
            "Les déploiements passent par Jenkins",
            "La production est déployée par le job Jenkins `payments-deploy` défini dans "
            "ci/Jenkinsfile ; on le lance à la main avec la version de la release en paramètre "
            "une fois la CI passée.",
        ),
        de=(
            "Deployments laufen über Jenkins",
            "Die Produktion wird vom Jenkins-Job `payments-deploy` aus ci/Jenkinsfile ausgerollt; "
            "man startet ihn von Hand mit der Release-Version als Parameter, sobald die CI grün "
            "ist.",
        ),
        pt=(
            "Deploys rodam no Jenkins",
            "A produção é publicada pelo job `payments-deploy` do Jenkins, definido em "
            "ci/Jenkinsfile; dispare-o à mão com a versão da release como parâmetro depois que a "
            "CI passar.",
        ),
        state="superseded",
        superseded_by="github-actions-deploy",
    ),
    _Concept(
        "celery-webhooks",
        "decision",
        "src/payments/tasks/webhooks.py",
        en=(
            "Webhooks are sent by Celery workers",
            "Merchant webhooks are queued as the Celery task `send_webhook` on RabbitMQ and "
            "delivered by the `payments-worker` pods; see src/payments/tasks/webhooks.py. Enqueue "
            "after the database commit, never inside the transaction.",
        ),
        fr=(
            "Les webhooks sont envoyés par des workers Celery",
            "Les webhooks destinés aux marchands sont mis en file comme tâche Celery "
            "`send_webhook` sur RabbitMQ et livrés par les pods `payments-worker` ; voir "
            "src/payments/tasks/webhooks.py. Mettre en file après le commit en base, jamais à "
            "l'intérieur de la transaction.",
        ),
        de=(
            "Webhooks verschicken Celery-Worker",
            "Webhooks an Händler landen als Celery-Task `send_webhook` in RabbitMQ und werden von "
            "den `payments-worker`-Pods zugestellt; siehe src/payments/tasks/webhooks.py. Erst "
            "nach dem Commit in die Warteschlange stellen, nie innerhalb der Transaktion.",
        ),
        pt=(
            "Webhooks são enviados por workers Celery",
            "Os webhooks para lojistas entram na fila como a tarefa Celery `send_webhook` no "
            "RabbitMQ e são entregues pelos pods `payments-worker`; veja "
            "src/payments/tasks/webhooks.py. Enfileire depois do commit no banco, nunca dentro da "
            "transação.",
        ),
        state="superseded",
        superseded_by="webhook-outbox",
    ),
    _Concept(
        "jwt-local-storage",
        "decision",
        "web/src/auth/token.ts",
        en=(
            "Dashboard keeps its JWT in localStorage",
            "After login the dashboard stores the access JWT under the `payments.token` key in "
            "`localStorage`, and web/src/auth/token.ts sends it as a `Bearer` header; tokens are "
            "valid for 12 hours.",
        ),
        fr=(
            "Le tableau de bord garde son JWT dans localStorage",
            "Après la connexion, le tableau de bord range le JWT d'accès sous la clé "
            "`payments.token` dans `localStorage`, et web/src/auth/token.ts l'envoie en en-tête "
            "`Bearer` ; les jetons sont valables 12 heures.",
        ),
        de=(
            "Das Dashboard hält sein JWT in localStorage",
            "Nach dem Login legt das Dashboard das Zugriffs-JWT unter dem Schlüssel "
            "`payments.token` in `localStorage` ab, und web/src/auth/token.ts schickt es als "
            "`Bearer`-Header mit; Tokens gelten 12 Stunden.",
        ),
        pt=(
            "O painel guarda o JWT no localStorage",
            "Depois do login, o painel guarda o JWT de acesso na chave `payments.token` do "
            "`localStorage`, e web/src/auth/token.ts o envia no cabeçalho `Bearer`; os tokens "
            "valem por 12 horas.",
        ),
        state="superseded",
        superseded_by="session-cookies",
    ),
    _Concept(
        "pip-tools-lock",
        "convention",
        "requirements/base.in",
        en=(
            "Dependencies are pinned with pip-tools",
            "Edit requirements/base.in or requirements/dev.in, then run `pip-compile "
            "--generate-hashes` to regenerate the matching .txt files; never edit the .txt files "
            "by hand.",
        ),
        fr=(
            "Dépendances épinglées avec pip-tools",
            "Modifier requirements/base.in ou requirements/dev.in, puis lancer `pip-compile "
            "--generate-hashes` pour régénérer les fichiers .txt correspondants ; ne jamais "
            "retoucher les .txt à la main.",
        ),
        de=(
            "Abhängigkeiten werden mit pip-tools gepinnt",
            "requirements/base.in oder requirements/dev.in bearbeiten, dann `pip-compile "
            "--generate-hashes` ausführen, um die passenden .txt-Dateien neu zu erzeugen; die "
            ".txt-Dateien nie von Hand ändern.",
        ),
        pt=(
            "Dependências fixadas com pip-tools",
            "Edite requirements/base.in ou requirements/dev.in e rode `pip-compile "
            "--generate-hashes` para regerar os arquivos .txt correspondentes; nunca edite os "
            ".txt à mão.",
        ),
        state="superseded",
        superseded_by="uv-lockfile",
    ),
    _Concept(
        "sqlite-tests",
        "convention",
        "tests/conftest.py",
        en=(
            "Tests use in-memory SQLite",
            "Database tests run on SQLite in memory (`sqlite+aiosqlite:///:memory:`) through the "
            "`db` fixture in tests/conftest.py, so no server is needed; keep SQL portable between "
            "SQLite and PostgreSQL.",
        ),
        fr=(
            "Les tests utilisent SQLite en mémoire",
            "Les tests de base de données tournent sur SQLite en mémoire "
            "(`sqlite+aiosqlite:///:memory:`) via la fixture `db` de tests/conftest.py, sans "
            "aucun serveur ; garder un SQL portable entre SQLite et PostgreSQL.",
        ),
        de=(
            "Tests nutzen SQLite im Speicher",
            "Datenbanktests laufen auf SQLite im Speicher (`sqlite+aiosqlite:///:memory:`) über "
            "die Fixture `db` in tests/conftest.py, ganz ohne Server; SQL muss deshalb zwischen "
            "SQLite und PostgreSQL portabel bleiben.",
        ),
        pt=(
            "Testes usam SQLite em memória",
            "Os testes de banco rodam em SQLite em memória (`sqlite+aiosqlite:///:memory:`) pela "
            "fixture `db` de tests/conftest.py, sem servidor; mantenha o SQL portável entre "
            "SQLite e PostgreSQL.",
        ),
        state="superseded",
        superseded_by="postgres-test-containers",
    ),
    # --- forgotten: stored, then deleted by the user ------------------------------------------
    _Concept(
        "staging-refresh",
        "convention",
        "scripts/staging_refresh.sh",
        en=(
            "Staging is refreshed from an anonymised production snapshot",
            "Every Monday at 06:00 UTC, `make staging-refresh` restores a snapshot of the "
            "production database into staging after scripts/anonymise.sql has scrubbed names, "
            "e-mail addresses and card fingerprints.",
        ),
        fr=(
            "La préprod est rafraîchie à partir d'un instantané anonymisé de la production",
            "Chaque lundi à 06:00 UTC, `make staging-refresh` restaure en préproduction un "
            "instantané de la base de production, une fois que scripts/anonymise.sql en a effacé "
            "les noms, les adresses e-mail et les empreintes de carte.",
        ),
        de=(
            "Staging wird aus einem anonymisierten Produktions-Snapshot aufgefrischt",
            "Jeden Montag um 06:00 UTC spielt `make staging-refresh` einen Snapshot der "
            "Produktionsdatenbank in Staging ein, nachdem scripts/anonymise.sql Namen, "
            "E-Mail-Adressen und Kartenfingerabdrücke entfernt hat.",
        ),
        pt=(
            "O staging é atualizado a partir de um snapshot anonimizado da produção",
            "Toda segunda-feira às 06:00 UTC, o `make staging-refresh` restaura no staging um "
            "snapshot do banco de produção, depois que o scripts/anonymise.sql apaga nomes, "
            "endereços de e-mail e fingerprints de cartão.",
        ),
        questions=(
            _Q(
                "forgotten",
                "How often does the staging database get a copy of production data?",
                "À quelle fréquence la base de préproduction reçoit-elle une copie des données de "
                "production ?",
                "Wie oft bekommt die Staging-Datenbank eine Kopie der Produktionsdaten?",
                "Com que frequência o banco de staging recebe uma cópia dos dados de produção?",
            ),
        ),
        state="forgotten",
    ),
    _Concept(
        "node-version-pin",
        "pitfall",
        "web/.nvmrc",
        en=(
            "Pin Node 18 for the dashboard build",
            "Never build web/ with Node 20 or newer: `sass-embedded` crashes during `npm run "
            "build`. The version is pinned to 18.19 in web/.nvmrc, so run `nvm use` first.",
        ),
        fr=(
            "Épingler Node 18 pour le build du tableau de bord",
            "Ne jamais construire web/ avec Node 20 ou plus récent : `sass-embedded` plante "
            "pendant `npm run build`. La version est fixée à 18.19 dans web/.nvmrc, il faut donc "
            "lancer `nvm use` d'abord.",
        ),
        de=(
            "Node 18 für den Dashboard-Build festhalten",
            "web/ nie mit Node 20 oder neuer bauen: `sass-embedded` stürzt bei `npm run build` "
            "ab. Die Version ist in web/.nvmrc auf 18.19 festgelegt, also vorher `nvm use` "
            "ausführen.",
        ),
        pt=(
            "Fixe o Node 18 no build do painel",
            "Nunca faça o build de web/ com Node 20 ou mais novo: o `sass-embedded` quebra "
            "durante o `npm run build`. A versão está fixada em 18.19 no web/.nvmrc, então rode "
            "`nvm use` antes.",
        ),
        questions=(
            _Q(
                "forgotten",
                "Which Node.js version do I need to build the web app?",
                "Quelle version de Node.js faut-il pour construire l'appli web ?",
                "Welche Node.js-Version brauche ich, um die Web-App zu bauen?",
                "Qual versão do Node.js preciso para fazer o build do app web?",
            ),
        ),
        state="forgotten",
    ),
    _Concept(
        "load-test-tool",
        "decision",
        "loadtests/locustfile.py",
        en=(
            "Load tests use Locust",
            "We chose Locust over k6 for load testing because the scenarios in "
            "loadtests/locustfile.py can reuse our Python factories; run them against staging "
            "with `locust -f loadtests/locustfile.py --users 200`.",
        ),
        fr=(
            "Les tests de charge utilisent Locust",
            "Nous avons choisi Locust plutôt que k6 pour les tests de charge, car les scénarios "
            "de loadtests/locustfile.py peuvent réutiliser nos fabriques Python ; on les lance "
            "contre la préproduction avec `locust -f loadtests/locustfile.py --users 200`.",
        ),
        de=(
            "Lasttests mit Locust",
            "Für Lasttests haben wir Locust statt k6 gewählt, weil die Szenarien in "
            "loadtests/locustfile.py unsere Python-Factories wiederverwenden können; gestartet "
            "werden sie gegen Staging mit `locust -f loadtests/locustfile.py --users 200`.",
        ),
        pt=(
            "Testes de carga usam Locust",
            "Escolhemos Locust em vez de k6 para testes de carga porque os cenários em "
            "loadtests/locustfile.py podem reaproveitar nossas fábricas Python; rode-os contra o "
            "staging com `locust -f loadtests/locustfile.py --users 200`.",
        ),
        questions=(
            _Q(
                "forgotten",
                "What do we use to put the API under heavy traffic before a big sale?",
                "Avec quoi soumet-on l'API à un fort trafic avant une grosse opération "
                "commerciale ?",
                "Womit setzen wir die API vor einer großen Rabattaktion unter hohen Verkehr?",
                "O que usamos para colocar a API sob tráfego pesado antes de uma grande promoção?",
            ),
        ),
        state="forgotten",
    ),
)

# Questions about the same project that nothing stored answers (en, fr, de, pt).
_NEGATIVES: Final[tuple[tuple[str, str, str, str], ...]] = (
    (
        "Which logging library does the payments service use?",
        "Quelle bibliothèque de logs le service de paiement utilise-t-il ?",
        "Welche Logging-Bibliothek verwendet der Zahlungsdienst?",
        "Qual biblioteca de log o serviço de pagamentos usa?",
    ),
    (
        "How do we rotate the TLS certificates for the payments API?",
        "Comment renouvelle-t-on les certificats TLS de l'API de paiement ?",
        "Wie tauschen wir die TLS-Zertifikate der Zahlungs-API aus?",
        "Como fazemos a rotação dos certificados TLS da API de pagamentos?",
    ),
    (
        "What uptime do we promise merchants for the API?",
        "Quelle disponibilité promet-on aux marchands pour l'API ?",
        "Welche Verfügbarkeit sichern wir Händlern für die API zu?",
        "Que disponibilidade prometemos aos lojistas para a API?",
    ),
    (
        "Which tool pages the on-call engineer when payments start failing in production?",
        "Quel outil alerte la personne d'astreinte quand les paiements commencent à échouer en "
        "production ?",
        "Welches Tool alarmiert die Rufbereitschaft, wenn in der Produktion Zahlungen "
        "fehlschlagen?",
        "Qual ferramenta aciona o plantonista quando os pagamentos começam a falhar em produção?",
    ),
    (
        "Do we accept Apple Pay or Google Pay at checkout?",
        "Accepte-t-on Apple Pay ou Google Pay au moment du paiement ?",
        "Akzeptieren wir Apple Pay oder Google Pay im Checkout?",
        "Aceitamos Apple Pay ou Google Pay no checkout?",
    ),
    (
        "How do we translate the dashboard into other languages?",
        "Comment traduit-on le tableau de bord dans d'autres langues ?",
        "Wie übersetzen wir das Dashboard in andere Sprachen?",
        "Como traduzimos o painel para outros idiomas?",
    ),
    (
        "What minimum test coverage does CI require before a pull request can be merged?",
        "Quelle couverture de tests minimale la CI exige-t-elle avant qu'une pull request puisse "
        "être fusionnée ?",
        "Welche Mindest-Testabdeckung verlangt die CI, bevor ein Pull Request gemergt werden darf?",
        "Qual cobertura mínima de testes a CI exige antes que um pull request possa entrar?",
    ),
    (
        "Which cloud region is the production database deployed in?",
        "Dans quelle région cloud la base de production est-elle déployée ?",
        "In welcher Cloud-Region läuft die Produktionsdatenbank?",
        "Em que região de nuvem fica o banco de dados de produção?",
    ),
    (
        "How are the processing fees on merchant invoices calculated?",
        "Comment sont calculés les frais de traitement sur les factures des marchands ?",
        "Wie werden die Transaktionsgebühren auf den Händlerrechnungen berechnet?",
        "Como são calculadas as taxas de processamento nas faturas dos lojistas?",
    ),
    (
        "Is there a rate limit on our public API, and how many requests does each merchant get?",
        "Y a-t-il une limite de débit sur notre API publique, et combien de requêtes chaque "
        "marchand a-t-il droit de faire ?",
        "Gibt es ein Rate-Limit für unsere öffentliche API, und wie viele Anfragen darf jeder "
        "Händler stellen?",
        "Existe limite de requisições na nossa API pública, e quantas requisições cada lojista "
        "pode fazer?",
    ),
    (
        "How do we generate the OpenAPI reference for the public API?",
        "Comment génère-t-on la référence OpenAPI de l'API publique ?",
        "Wie erzeugen wir die OpenAPI-Referenz für die öffentliche API?",
        "Como geramos a referência OpenAPI da API pública?",
    ),
    (
        "How do we run end-to-end browser tests against the dashboard?",
        "Comment lance-t-on des tests de bout en bout dans un navigateur sur le tableau de bord ?",
        "Wie führen wir End-to-End-Tests im Browser gegen das Dashboard aus?",
        "Como rodamos testes end-to-end no navegador contra o painel?",
    ),
    (
        "Which error-tracking service collects exceptions from production?",
        "Quel service de suivi des erreurs collecte les exceptions de la production ?",
        "Welcher Fehler-Tracking-Dienst sammelt die Exceptions aus der Produktion?",
        "Qual serviço de rastreamento de erros coleta as exceções da produção?",
    ),
    (
        "What identity checks do we run before a new merchant can take payments?",
        "Quelles vérifications d'identité fait-on avant qu'un nouveau marchand puisse encaisser "
        "des paiements ?",
        "Welche Identitätsprüfungen machen wir, bevor ein neuer Händler Zahlungen annehmen darf?",
        "Que verificações de identidade fazemos antes de um novo lojista poder receber pagamentos?",
    ),
    (
        "Which browsers does the merchant dashboard support?",
        "Quels navigateurs le tableau de bord marchand prend-il en charge ?",
        "Welche Browser unterstützt das Händler-Dashboard?",
        "Quais navegadores o painel do lojista suporta?",
    ),
)


# --- assembly ---------------------------------------------------------------------------------


def _localised(concept: _Concept, language: Language) -> _Localised:
    return {"en": concept.en, "fr": concept.fr, "de": concept.de, "pt": concept.pt}[language]


def _check(coding_set: CodingSet) -> None:
    """Refuse an inconsistent table: a mistake in it would silently skew every figure."""
    item_keys = [item.key for item in coding_set.items]
    question_keys = [question.key for question in coding_set.questions]
    if len(set(item_keys)) != len(item_keys) or len(set(question_keys)) != len(question_keys):
        raise ValueError("duplicate item or question key")
    states = {(item.concept, item.language): item.state for item in coding_set.items}
    for item in coding_set.items:
        if (item.state == "superseded") != (item.superseded_by is not None):
            raise ValueError(f"{item.key}: superseded_by must be set exactly when superseded")
        if item.superseded_by and states.get((item.superseded_by, item.language)) != "current":
            raise ValueError(f"{item.key}: replaced by a concept that is not current")
    for question in coding_set.questions:
        for concept in question.relevant:
            if states.get((concept, question.language)) != "current":
                raise ValueError(f"{question.key}: {concept} is not a current concept")


def build() -> CodingSet:
    """The whole set: every concept in every language, then every question."""
    items: list[Item] = []
    questions: list[Question] = []
    for concept in _CONCEPTS:
        for language in LANGUAGES:
            title, text = _localised(concept, language)
            items.append(
                Item(
                    key=f"{concept.slug}.{language}",
                    concept=concept.slug,
                    language=language,
                    kind=concept.kind,
                    title=title,
                    text=text,
                    citation=concept.citation,
                    state=concept.state,
                    superseded_by=concept.superseded_by,
                )
            )
        for number, question in enumerate(concept.questions, start=1):
            relevant: tuple[str, ...] = () if question.category == "forgotten" else (concept.slug,)
            questions.extend(
                Question(
                    key=f"q-{concept.slug}-{number}.{language}",
                    language=language,
                    text=_in(language, question.en, question.fr, question.de, question.pt),
                    relevant=relevant,
                    category=question.category,
                )
                for language in LANGUAGES
            )
    for number, negative in enumerate(_NEGATIVES, start=1):
        questions.extend(
            Question(
                key=f"neg-{number}.{language}",
                language=language,
                text=_in(language, *negative),
                relevant=(),
                category="negative",
            )
            for language in LANGUAGES
        )
    coding_set = CodingSet(items=tuple(items), questions=tuple(questions))
    _check(coding_set)
    return coding_set


def _summary(coding_set: CodingSet) -> str:
    def line(label: str, counts: Counter[str]) -> str:
        return f"{label}: " + ", ".join(f"{key} {count}" for key, count in counts.items())

    items, questions = coding_set.items, coding_set.questions
    concepts = {item.concept for item in items}
    return "\n".join(
        (
            f"{len(concepts)} concepts, {len(items)} items, {len(questions)} questions",
            line("items per language", Counter(item.language for item in items)),
            line("items per kind", Counter(item.kind for item in items)),
            line("items per state", Counter(item.state for item in items)),
            line("questions per language", Counter(q.language for q in questions)),
            line("questions per category", Counter(q.category for q in questions)),
        )
    )


if __name__ == "__main__":
    print(_summary(build()))
