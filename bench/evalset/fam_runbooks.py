"""Internal engineering runbooks, one per service.

Runbooks are the classic case of near-duplicate documents: the same template, the same words ("replica",
"rollback", "page"), and a handful of commands and thresholds that differ per service and are exactly what
an on-call engineer searches for.
"""

from __future__ import annotations

from .schema import Family, fact

PEOPLE = [
    ("Amara Nwosu", "engineering manager"),
    ("Lukas Brenner", "staff engineer"),
    ("Priya Raman", "principal engineer"),
    ("Tomás Herrera", "head of infrastructure"),
    ("Hannah Lindqvist", "tech lead"),
    ("Kenji Watanabe", "site reliability lead"),
    ("Fatima El-Sayed", "director of platform"),
    ("Oliver Grant", "senior SRE"),
]
STACKS = [
    ("Go", "Kubernetes on GKE"),
    ("Kotlin", "the JVM 21 runtime on EKS"),
    ("Python 3.11", "Gunicorn workers behind Envoy"),
    ("Rust", "Nomad on bare-metal hosts"),
    ("TypeScript", "Node.js 20 on ECS Fargate"),
    ("Java 17", "Kubernetes on AKS"),
    ("Elixir", "BEAM releases on EC2 autoscaling groups"),
]
INFRA = ["Redis", "Kafka", "the Vault secrets store", "the object store", "Elasticsearch", "RabbitMQ", "Memcached"]
ENGINES = ["PostgreSQL 15", "PostgreSQL 16", "MySQL 8", "CockroachDB", "Aurora PostgreSQL"]
REGIONS = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-2"]
VENDORS = ["CloudHost", "Stripe", "Twilio", "Fastly", "SendGrid", "Mapbox", "Datadog"]
MIGRATIONS = [
    ("written expand-and-contract", "a rollback never needs a down migration"),
    ("forward-only", "rolling back code requires the previous build to tolerate the newer schema"),
    ("gated behind feature flags", "turn the flag off before rolling back the code"),
]


def _owner(r, e):
    return {}


def _stack(r, e):
    lang, runtime = r.choice(STACKS)
    return {"lang": lang, "runtime": runtime}


def _deps(r, e):
    others = [x["name"] for x in ENTITIES if x["name"] != e["name"]]
    return {"dep1": r.choice(others), "dep2": r.choice(INFRA), "code": r.choice(["503", "502", "424"])}


def _deploycmd(r, e):
    n = e["name"]
    cmd = r.choice(
        [
            f"make release SERVICE={n} ENV=production",
            f"./scripts/ship.sh {n} prod",
            f"deployctl apply --service {n} --env prod",
            f"argo app sync {n}-prod",
        ]
    )
    return {"cmd": cmd}


def _window(r, e):
    days = r.choice(["Monday to Thursday", "Tuesday to Thursday", "Monday, Wednesday and Thursday", "Monday to Friday"])
    start = r.choice(["08:00", "09:00", "10:00", "13:00"])
    end = r.choice(["15:00", "16:00", "17:00", "18:00"])
    return {"days": days, "start": start, "end": end}


def _canary(r, e):
    return {"pct": str(r.choice([1, 2, 5, 10, 20])), "mins": str(r.choice([10, 15, 20, 30, 45, 60]))}


def _latency(r, e):
    return {"ms": str(r.choice([250, 300, 400, 500, 750, 800, 1200, 2000])), "mins": str(r.choice([3, 5, 10, 15]))}


def _errors(r, e):
    return {"pct": r.choice(["0.5", "1", "2", "3", "5"]), "mins": str(r.choice([2, 3, 5, 10]))}


def _route(r, e):
    rotation = r.choice(["primary", "platform-primary", "product-oncall", "follow-the-sun", "weekday-core"])
    return {
        "rotation": rotation,
        "tool": r.choice(["PagerDuty", "Opsgenie", "incident.io"]),
        "mins": str(r.choice([5, 10, 15])),
    }


def _cluster(r, e):
    name = f"{r.choice(['pg', 'db', 'sql', 'rds'])}-{e['name'].split('-')[0]}-{r.randint(1, 9)}"
    return {"cluster": name, "engine": r.choice(ENGINES), "region": r.choice(REGIONS)}


def _promote(r, e):
    cmd = r.choice(
        [
            f"dbctl promote --cluster {e['name']}-replica",
            f"patronictl failover {e['name']}",
            f"./ops/failover.sh {e['name']} --confirm",
            f"rds-failover --db {e['name']}-primary",
        ]
    )
    return {"cmd": cmd, "secs": str(r.choice([10, 20, 30, 45, 60, 90]))}


def _rpo(r, e):
    return {"mins": str(r.choice([5, 15, 30, 60])), "hours": str(r.choice([6, 12, 24]))}


def _rollback(r, e):
    n = e["name"]
    cmd = r.choice(
        [
            f"deployctl rollback --service {n} --to previous",
            f"./scripts/ship.sh {n} prod --revert",
            f"argo app rollback {n}-prod",
            f"make rollback SERVICE={n}",
        ]
    )
    return {"cmd": cmd}


def _rbrule(r, e):
    return {"burn": str(r.choice([2, 5, 10, 14])), "mins": str(r.choice([10, 15, 30, 60]))}


def _migrations(r, e):
    pattern, consequence = r.choice(MIGRATIONS)
    return {"pattern": pattern, "consequence": consequence}


def _replicas(r, e):
    lo = r.choice([2, 3, 4, 6])
    return {"lo": str(lo), "hi": str(lo * r.choice([3, 4, 5, 8])), "cpu": str(r.choice([50, 60, 65, 70, 75]))}


def _peak(r, e):
    when = r.choice(
        [
            "weekday mornings between 08:00 and 10:00 UTC",
            "the first business day of each month",
            "Sunday evenings",
            "Black Friday and Cyber Monday",
            "the last day of each quarter",
        ]
    )
    return {"rps": f"{r.choice([350, 900, 1800, 2400, 4200, 7500, 12000]):,}", "when": when}


def _memory(r, e):
    return {"mem": str(r.choice([256, 512, 768, 1024, 2048, 4096])), "oom": str(r.choice([2, 3, 5]))}


def _escalate(r, e):
    person, role = r.choice(PEOPLE)
    return {"person": person, "role": role, "mins": str(r.choice([15, 20, 30, 45]))}


def _channel(r, e):
    return {"channel": r.choice([f"inc-{e['name']}", f"{e['name']}-war-room", f"ops-{e['name'].split('-')[0]}"])}


def _vendor(r, e):
    return {
        "vendor": r.choice(VENDORS),
        "prio": r.choice(["P1", "P2", "Urgent", "Sev-1"]),
        "acct": f"AC-{r.randint(10000, 99999)}",
    }


FACTS = (
    fact(
        "overview-owner",
        "Service Overview",
        _owner,
        says=[
            "{name} is owned by the {team} team, who triage its tickets in the {board} board every morning.",
            "Ownership: the {team} team maintains {name} and reviews its tickets in the {board} board each morning.",
        ],
        lex=["Which team owns {name} and triages its tickets?"],
        para=["Who is responsible for looking after the {name} service?"],
        topic="the owning team",
        answer="{team}",
    ),
    fact(
        "overview-stack",
        "Service Overview",
        _stack,
        says=[
            "The service is written in {lang} and runs on {runtime}.",
            "{name} is a {lang} codebase deployed to {runtime}.",
        ],
        lex=[
            "What language is {name} written in and what does it run on?",
            "What kind of codebase is {name} and where is it deployed?",
        ],
        para=["What programming stack is the {name} service built with?"],
        topic="the language and runtime",
        answer="{lang}",
    ),
    fact(
        "overview-deps",
        "Service Overview",
        _deps,
        says=[
            "It depends on {dep1} and {dep2}; if either is unavailable, requests fail fast with HTTP {code}.",
            "Hard dependencies are {dep1} and {dep2}. When one of them is down, {name} returns HTTP {code} "
            "immediately rather than queueing work.",
        ],
        lex=[
            "Which hard dependencies does {name} have, and what HTTP status does it return when one is down?",
            "What does {name} depend on, and what happens to requests if a dependency is unavailable?",
        ],
        para=["What other components must be healthy for the {name} service to function?"],
        topic="the hard dependencies",
        answer="{dep1} and {dep2}",
    ),
    fact(
        "deploy-cmd",
        "Deployment",
        _deploycmd,
        says=[
            "Production deploys are triggered with `{cmd}` from an up-to-date main branch.",
            "To deploy {name}, run `{cmd}` from a clean checkout of main.",
        ],
        lex=["What command deploys {name} to production?", "Which command do I run to deploy {name}?"],
        para=["How do I push a new build of the {name} service live?"],
        topic="the deploy command",
        answer="{cmd}",
    ),
    fact(
        "deploy-window",
        "Deployment",
        _window,
        says=[
            "Deploys to production are allowed {days}, {start} to {end} UTC; anything outside that window "
            "needs sign-off from the incident commander on duty.",
            "The deploy window for {name} is {days}, {start} to {end} UTC, and exceptions need sign-off from the "
            "incident commander on duty.",
        ],
        lex=["When is the production deploy window for {name}?"],
        para=["At what times am I permitted to ship changes to the {name} service?"],
        topic="the deploy window",
        answer="{days}, {start} to {end} UTC",
    ),
    fact(
        "deploy-canary",
        "Deployment",
        _canary,
        says=[
            "New versions first receive {pct}% of traffic as a canary for {mins} minutes before the rollout continues.",
            "Every release starts as a {pct}% canary, and promotion to full traffic happens automatically after "
            "{mins} minutes if the error rate stays flat.",
        ],
        lex=["How long does the canary run for {name}, and at what percentage of traffic?"],
        para=["How is a fresh build of the {name} service trialled on a slice of users first?"],
        topic="the canary stage",
        answer="{pct}%",
    ),
    fact(
        "alert-latency",
        "Alerts and Paging",
        _latency,
        says=[
            "The HighLatency alert fires when p99 latency stays above {ms} ms for {mins} minutes.",
            "Latency alerting: a p99 above {ms} ms sustained for {mins} minutes triggers HighLatency.",
        ],
        lex=["When does the p99 HighLatency alert fire for {name}?"],
        para=["How slow does the {name} service need to get before someone is woken up?"],
        topic="the latency alert threshold",
        answer="{ms} ms",
    ),
    fact(
        "alert-errors",
        "Alerts and Paging",
        _errors,
        says=[
            "A page is sent if the 5xx error rate exceeds {pct}% for {mins} consecutive minutes.",
            "If more than {pct}% of responses are 5xx errors for {mins} minutes in a row, on-call is paged.",
        ],
        lex=["What 5xx error rate triggers a page for {name}?"],
        para=["What proportion of failing requests gets an engineer woken up for the {name} service?"],
        topic="the error-rate paging threshold",
        answer="{pct}%",
        xref=(
            "Rollback Procedure",
            [
                "Error-rate pages that start right after a deploy are the usual trigger for a rollback.",
            ],
        ),
    ),
    fact(
        "alert-route",
        "Alerts and Paging",
        _route,
        says=[
            "Pages route to the {rotation} rotation in {tool}; the secondary is paged after {mins} minutes without "
            "acknowledgement.",
            "{name} pages go to the {rotation} rotation in {tool}, escalating to the secondary after {mins} "
            "minutes unacknowledged.",
        ],
        lex=["Which rotation receives pages for {name}?"],
        para=["Who gets notified first when the {name} service breaks?"],
        topic="the paging rotation",
        answer="{rotation}",
    ),
    fact(
        "db-cluster",
        "Database Failover",
        _cluster,
        says=[
            "The primary datastore is the {cluster} {engine} cluster in {region}, with a synchronous replica in a "
            "second zone.",
            "{name} writes to the {cluster} cluster ({engine}, {region}), which keeps a synchronous replica in a "
            "second zone.",
        ],
        lex=["Which database cluster is the primary datastore for {name}?", "Which cluster does {name} write to?"],
        para=["Where does the {name} service store its records?"],
        topic="the primary database cluster",
        answer="{cluster}",
    ),
    fact(
        "db-promote",
        "Database Failover",
        _promote,
        says=[
            "To fail over, promote the replica with `{cmd}`; expect about {secs} seconds of write unavailability.",
            "Failover is manual: run `{cmd}` to promote the replica, and writes are rejected for roughly {secs} "
            "seconds while it takes over.",
        ],
        lex=["How do I promote the replica to fail over {name}?"],
        para=["What's the procedure to switch the {name} service to its standby database if the main one dies?"],
        topic="the failover procedure",
        answer="{cmd}",
        xref=(
            "Escalation Contacts",
            [
                "Tell the escalation contact before any database failover; the steps themselves are in Database "
                "Failover.",
            ],
        ),
    ),
    fact(
        "db-rpo",
        "Database Failover",
        _rpo,
        says=[
            "The recovery point objective is {mins} minutes, and full backups are taken every {hours} hours.",
            "Full backups run every {hours} hours and the recovery point objective is {mins} minutes.",
        ],
        lex=["What is the recovery point objective for {name}, and how often are full backups taken?"],
        para=["How much data could the {name} service lose in the worst case?"],
        topic="the recovery point objective",
        answer="{mins} minutes",
    ),
    fact(
        "rb-cmd",
        "Rollback Procedure",
        _rollback,
        says=[
            "Roll back with `{cmd}`, which redeploys the previous image tag without rebuilding.",
            "The rollback command is `{cmd}`; it redeploys the previous image tag rather than rebuilding.",
        ],
        lex=["What command rolls back {name} to the previous image tag?"],
        para=["How do I undo a bad release of the {name} service?"],
        topic="the rollback command",
        answer="{cmd}",
        xref=(
            "Deployment",
            [
                "If a deploy goes wrong, follow the Rollback Procedure rather than deploying a fix on top of it.",
            ],
        ),
    ),
    fact(
        "rb-rule",
        "Rollback Procedure",
        _rbrule,
        says=[
            "If the error budget burn rate exceeds {burn}x within {mins} minutes of a deploy, roll back first and "
            "investigate afterwards.",
            "Roll back first and investigate afterwards whenever the error budget burns faster than {burn}x in "
            "the {mins} minutes after a deploy.",
        ],
        lex=["When should I roll back {name} after a deploy, based on error budget burn rate?"],
        para=["What's the rule of thumb for reverting the {name} service quickly when a new build misbehaves?"],
        topic="when to roll back",
        answer="{burn}x",
    ),
    fact(
        "rb-migrations",
        "Rollback Procedure",
        _migrations,
        says=[
            "Schema migrations for {name} are {pattern}, so {consequence}.",
            "Because schema migrations are {pattern}, {consequence}.",
        ],
        lex=["How are schema migrations handled when rolling back {name}?"],
        para=["Do table structure changes need undoing when I take back a {name} deployment?"],
        topic="how migrations interact with a rollback",
        answer="{pattern}",
    ),
    fact(
        "scale-replicas",
        "Scaling and Capacity",
        _replicas,
        says=[
            "{name} runs between {lo} and {hi} replicas under the horizontal autoscaler, targeting {cpu}% CPU.",
            "The horizontal autoscaler keeps {name} between {lo} and {hi} replicas with a CPU target of {cpu}%.",
        ],
        lex=["How many replicas does {name} run under the horizontal autoscaler?"],
        para=["What's the smallest and largest pod count for the {name} service?"],
        topic="the replica range",
        answer="{lo} and {hi} replicas",
    ),
    fact(
        "scale-peak",
        "Scaling and Capacity",
        _peak,
        says=[
            "Peak traffic is roughly {rps} requests per second on {when}.",
            "Traffic peaks at about {rps} requests per second, typically on {when}.",
        ],
        lex=["What is the peak traffic for {name} in requests per second?"],
        para=["How busy does the {name} service get at its busiest, and when does that happen?"],
        topic="the peak load",
        answer="{rps}",
    ),
    fact(
        "scale-memory",
        "Scaling and Capacity",
        _memory,
        says=[
            "Each pod has a memory limit of {mem} MiB, and more than {oom} OOM kills in an hour pages the owners.",
            "Pods are capped at {mem} MiB of memory; {oom} or more OOM kills within an hour page the owners.",
        ],
        lex=["What is the memory limit per pod for {name}?"],
        para=["How much RAM is each {name} instance allowed?"],
        topic="the per-pod memory limit",
        answer="{mem} MiB",
    ),
    fact(
        "esc-person",
        "Escalation Contacts",
        _escalate,
        says=[
            "Escalate to {person}, the {role}, if there is no progress after {mins} minutes.",
            "With no progress after {mins} minutes, escalate to {person} ({role}).",
        ],
        lex=["Who do I escalate to for {name} if there is no progress?"],
        para=["If I'm stuck on a {name} incident, whose help should I ask for next?"],
        topic="the escalation contact",
        answer="{person}",
    ),
    fact(
        "esc-channel",
        "Escalation Contacts",
        _channel,
        says=[
            "Incident coordination happens in the #{channel} Slack channel; post a short status update there every "
            "thirty minutes.",
            "Coordinate incidents in #{channel} on Slack and post a status update there every thirty minutes.",
        ],
        lex=["Which Slack channel is used for {name} incident coordination?"],
        para=["Where does the team chat while the {name} service is down?"],
        topic="the incident channel",
        answer="#{channel}",
    ),
    fact(
        "esc-vendor",
        "Escalation Contacts",
        _vendor,
        says=[
            "For {vendor} outages, open a support ticket with priority {prio} quoting account {acct}.",
            "When {vendor} has an outage, raise a {prio} support ticket and quote account {acct}.",
        ],
        lex=["How do I open a {vendor} support ticket for {name} and which account do I quote?"],
        para=["How do I get the third-party provider behind the {name} service to help us?"],
        topic="the vendor escalation path",
        answer="{acct}",
    ),
)

SECTIONS = (
    "Service Overview",
    "Deployment",
    "Alerts and Paging",
    "Database Failover",
    "Rollback Procedure",
    "Scaling and Capacity",
    "Escalation Contacts",
)

FILLERS = {
    "Service Overview": (
        "{name} {purpose}. It sits behind the public API gateway and is reached only through internal service "
        "discovery.",
        "This runbook is the first thing to open when {name} misbehaves; the architecture decision records live in "
        "the repository under docs/adr.",
        "All configuration is read from environment variables at start-up, and secrets are injected by the "
        "platform rather than committed to the repository.",
        "Dashboards for {name} are linked from the service catalogue entry, which also lists the on-call schedule "
        "and the last ten deploys.",
        "The service is considered tier one, which means customer-facing impact is likely within minutes of a "
        "sustained failure.",
        "Source code lives in the monorepo under services/{name}, and the README there explains how to run it locally.",
        "Requests are traced end to end, so a trace ID from a customer report can be pasted straight into the "
        "tracing tool.",
        "The service level objective is published on the internal status page, together with the remaining error "
        "budget.",
    ),
    "Deployment": (
        "Every change goes through code review and a green continuous integration run before it can be merged, "
        "and merges to main produce a signed container image.",
        "Announce each production deploy in the team channel with a link to the change, and stay at your desk until "
        "the rollout has finished.",
        "Configuration changes are deployed the same way as code changes, so they are versioned and can be rolled "
        "back with the same tooling.",
        "Staging receives every build automatically, and smoke tests there must pass before the production pipeline "
        "will start.",
        "Avoid deploying during an open incident, even an unrelated one, because it makes the timeline much harder to "
        "reason about.",
        "Database migrations run as a separate job before the new pods start, and the rollout waits for that job to "
        "succeed.",
        "Release notes are generated from merged pull request titles, so write titles that make sense to someone "
        "outside the team.",
        "If a deploy is stuck, read the pipeline logs before retrying; retrying a half-finished rollout can leave "
        "mixed versions running.",
    ),
    "Alerts and Paging": (
        "Alerts are defined as code in the monitoring repository, and every alert must link back to the relevant "
        "section of this runbook.",
        "Acknowledge a page as soon as you start looking, even if you do not yet know the cause; it stops the "
        "escalation timer.",
        "Warnings that do not page are sent to the team channel during working hours and are reviewed at the weekly "
        "operations meeting.",
        "If an alert fires repeatedly without action being needed, raise a ticket to tune it rather than silencing it "
        "indefinitely.",
        "Synthetic checks probe the main endpoints from three regions, and a failure in a single region alone does "
        "not page.",
        "Each alert has a severity label; only critical alerts page, while warnings create a ticket in the team queue.",
        "Maintenance windows must be registered in the monitoring tool in advance so that planned work does not "
        "page anyone.",
        "When an alert resolves itself, still write a one-line note in the on-call log explaining what you saw.",
    ),
    "Database Failover": (
        "Failover is a last resort. First confirm with the database dashboards that the primary is genuinely "
        "unhealthy rather than merely slow.",
        "Connection strings point at a stable DNS name, so clients follow the new primary once the record is "
        "updated and their pools reconnect.",
        "After any failover, open a ticket to rebuild the old primary as a fresh replica; do not simply restart it "
        "and rejoin.",
        "Point-in-time recovery is possible from the continuous write-ahead log archive, but restoring takes hours "
        "and needs the owning team's approval.",
        "Read-only traffic can keep flowing from the replicas during a failover, so reporting jobs are usually "
        "unaffected.",
        "Practise the failover in staging at least once a quarter so that the steps stay familiar to everyone on "
        "the rotation.",
        "Long-running transactions can delay a failover, so look for them on the dashboard before you start.",
        "Database credentials are rotated automatically, and the application picks up new ones without a restart.",
    ),
    "Rollback Procedure": (
        "A rollback is always preferable to a hurried forward fix in the middle of the night; the fix can wait for "
        "daylight and a second pair of eyes.",
        "Record the rollback in the incident document with the image tags involved, so the follow-up review has an "
        "accurate timeline.",
        "Feature flags can often disable a faulty code path faster than a rollback, so check the flag dashboard first.",
        "After rolling back, pause the pipeline so that the next merge to main does not redeploy the faulty change "
        "by accident.",
        "If the previous image tag is itself broken, pick the last tag marked as known-good in the release history.",
        "Rolling back does not undo changes made to external systems, such as emails already sent or payments "
        "already captured.",
        "Tell the support team when a rollback happens, so that they can recognise related customer reports.",
        "Keep the faulty image tag available for investigation rather than deleting it from the registry.",
    ),
    "Scaling and Capacity": (
        "Capacity is reviewed every quarter against the growth forecast, and headroom of at least thirty percent is "
        "kept for unexpected spikes.",
        "Scaling events are logged, so a sudden jump in replicas is visible on the capacity dashboard alongside "
        "the request rate.",
        "Manual scaling is possible in an emergency but is overwritten by the autoscaler on its next evaluation "
        "unless the policy is paused.",
        "Load tests are run against staging before major launches, using recorded production traffic shapes.",
        "Cost per request is tracked monthly; a sustained increase usually points to an inefficient query rather "
        "than more traffic.",
        "Cold starts take longer than usual after a new release because caches are empty, so expect a brief rise in "
        "latency.",
        "Batch jobs are scheduled outside peak hours to leave headroom for interactive traffic.",
        "Resource requests are set slightly below limits, so that the scheduler can pack pods efficiently without "
        "starving them.",
    ),
    "Escalation Contacts": (
        "Escalating is never a failure. If you are unsure, escalate early and let the more experienced person "
        "decide to stand down.",
        "Declare an incident in the incident tool as soon as customers are affected, and name an incident commander "
        "straight away.",
        "Out of hours, phone numbers for every contact are in the on-call tool profile rather than in this document.",
        "Customer communication during an incident is handled by the support lead, not by the engineers working on "
        "the fix.",
        "Every incident with customer impact gets a blameless review within five working days.",
        "Contact details for partner teams are listed in the service catalogue, which is the source of truth if "
        "this page disagrees.",
        "If a security issue is suspected, involve the security on-call immediately, whatever the time of day.",
        "During long incidents, hand over to a fresh responder after four hours and write a short handover note.",
    ),
}

COMMON = (
    "Keep this runbook up to date: if a step here was wrong during an incident, fix it in the same week.",
    "Commands in this document assume you are authenticated against the production cluster with your own credentials.",
    "When in doubt, prefer actions that can be undone over actions that cannot.",
)

INTRO = (
    "This runbook describes how to operate {name} in production.",
    "Operational guide for {name}: deploys, alerts, failover, rollbacks, capacity and escalation.",
)


def _service(name, team, board, purpose):
    return {
        "key": f"runbook-{name}",
        "name": name,
        "team": team,
        "board": board,
        "purpose": purpose,
        "ref": f"the {name} service",
        "title": f"Runbook: {name}",
        "filename": f"runbook-{name}.md",
    }


ENTITIES = (
    _service("billing-api", "Payments Platform", "PAYPLAT", "generates invoices and applies tax rules to every charge"),
    _service("search-indexer", "Discovery", "DISCO", "keeps the product search index in step with the catalogue"),
    _service("auth-gateway", "Identity", "IDENT", "authenticates every request and issues short-lived session tokens"),
    _service("payments-ledger", "Core Ledger", "LEDGER", "records every money movement in a double-entry ledger"),
    _service("notification-fanout", "Messaging", "MSGS", "delivers email, SMS and push notifications"),
    _service("media-transcoder", "Media", "MEDIA", "converts uploaded video into streaming renditions"),
    _service("geo-router", "Maps Infrastructure", "MAPS", "computes delivery routes and travel-time estimates"),
    _service("report-builder", "Insights", "INSIGHT", "renders scheduled customer reports as PDF and CSV"),
)

OPENERS = (
    ("I'm on call for {ref} this week and reading its runbook.", "Good idea to read it up front. What do you need?"),
    ("I've been asked to take over {ref}.", "Okay. What would you like to know about it first?"),
    ("Something looks off with {ref}, I'm opening the runbook.", "Let's go through it. What are you checking?"),
)

FAMILY = Family(
    name="runbooks",
    title="{title}",
    sections=SECTIONS,
    facts=FACTS,
    fillers=FILLERS,
    common=COMMON,
    intro=INTRO,
    entities=ENTITIES,
    openers=OPENERS,
    pair="I'm on call for both {a} and {b} this week.",
)
