"""Chooses recall's similarity threshold for the configured embedding model from labelled data.

Each topic has messages from an earlier conversation and questions a user might ask later in other
words. A question's relevant messages are its topic's; every other message is irrelevant. For each
threshold we report precision and recall of "similarity >= threshold" over all (question, message)
pairs, and the threshold with the best F1 (and the lowest one keeping precision >= 0.9).

    .venv/bin/python bench/recall_threshold.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _setup import django_for_bench

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TOPICS = {
    "k8s-deploy": (
        [
            "We deployed the billing service to Kubernetes using Helm charts.",
            "The Helm chart runs three replicas with a rolling update strategy.",
            "Rollbacks are done with helm rollback to the previous release.",
        ],
        ["How did we ship billing to the cluster?", "What was our rollout setup for the billing pods?"],
    ),
    "piano": (
        [
            "My daughter's piano recital is on Saturday afternoon.",
            "She has been practising a Chopin nocturne for weeks.",
            "The recital is at the music school on Rue Sainte.",
        ],
        ["When is my kid's concert?", "What piece is she playing at the recital?"],
    ),
    "vat": (
        [
            "The new VAT rate for our invoices is 21 percent from January.",
            "We must regenerate the March invoices with the updated tax rate.",
            "Accounting asked for a credit note for the wrong tax amounts.",
        ],
        ["What tax percentage do invoices use now?", "Which invoices need to be redone because of tax?"],
    ),
    "disk": (
        [
            "The staging database runs out of disk space every Sunday night.",
            "The WAL archive grows by 40 GB a week on staging.",
            "We added a seven day retention for archived WAL files.",
        ],
        ["Why does staging Postgres fill its storage?", "What did we do about the full disk on staging?"],
    ),
    "hiring": (
        [
            "We plan to hire two backend engineers in Q3.",
            "The budget allows one senior and one mid-level engineer.",
            "Interviews start after the summer holidays.",
        ],
        ["How many developers are we recruiting?", "When does hiring for the backend team begin?"],
    ),
    "sso": (
        [
            "We are migrating login to SSO with Okta.",
            "SAML assertions failed because of a clock skew on the IdP.",
            "Employees will log in with their Okta account from May.",
        ],
        ["What identity provider are we moving to?", "Why did single sign-on break?"],
    ),
    "kafka": (
        [
            "The Kafka consumer lag on the orders topic reached two hours.",
            "We doubled the consumer group to twelve instances.",
            "Lag dropped to under a minute after the partition rebalance.",
        ],
        ["What happened with the event queue delays?", "How did we fix the backlog on the orders stream?"],
    ),
    "vacation": (
        [
            "I'm going on holiday to Portugal in August.",
            "We booked a small house near Lagos for two weeks.",
            "I'll be offline from the 5th to the 19th of August.",
        ],
        ["Where am I travelling this summer?", "When will I be away?"],
    ),
    "diet": (
        [
            "I became vegetarian last year.",
            "I avoid meat and fish but still eat eggs and cheese.",
            "Please suggest recipes without meat.",
        ],
        ["What food restrictions do I have?", "Can you recommend dinner ideas that fit my diet?"],
    ),
    "laptop": (
        [
            "My laptop battery drains in two hours since the last update.",
            "The fan is always on and the CPU stays at 100 percent.",
            "The culprit was the indexing service stuck in a loop.",
        ],
        ["Why is my notebook so slow on battery?", "What was eating my processor?"],
    ),
    "lease": (
        [
            "The Lyon office lease ends in December.",
            "The landlord wants a 12 percent rent increase.",
            "We are looking at a smaller space near Part-Dieu.",
        ],
        ["What's going on with the office rental?", "Are we moving offices in Lyon?"],
    ),
    "ios": (
        [
            "The iOS app release was rejected by App Review.",
            "Apple flagged the missing account deletion option.",
            "We added in-app account deletion and resubmitted.",
        ],
        ["Why didn't the iPhone app get approved?", "What did the App Store reviewers complain about?"],
    ),
    "gdpr": (
        [
            "The GDPR audit found customer emails in application logs.",
            "We now mask personal data before logging.",
            "The DPO wants a data retention policy by June.",
        ],
        ["What privacy issues did the audit raise?", "How are we handling personal information in logs?"],
    ),
    "cdn": (
        [
            "The CDN bill tripled last month because of uncached images.",
            "Image responses were missing cache-control headers.",
            "After adding caching headers the egress cost fell by 70 percent.",
        ],
        ["Why was our content delivery cost so high?", "What reduced the bandwidth charges?"],
    ),
    "running": (
        [
            "I'm training for the Berlin marathon in September.",
            "My long runs are on Sunday mornings, about 30 km.",
            "I hurt my knee and had to skip two weeks.",
        ],
        ["What race am I preparing for?", "How is my training schedule organised?"],
    ),
    "contract": (
        [
            "The vendor contract with Acme renews automatically in March.",
            "We need to give 90 days notice to cancel.",
            "Legal wants to renegotiate the liability cap.",
        ],
        ["When does the supplier agreement renew?", "What is the cancellation notice period for Acme?"],
    ),
}


def main() -> None:
    # Every embedding is recorded as a model call, so the bench needs a migrated database of its own.
    django_for_bench("recollect_bench_threshold")
    import numpy as np

    from foundation import ai

    messages, message_topic, questions, question_topic = [], [], [], []
    for topic, (said, asked) in TOPICS.items():
        messages += said
        message_topic += [topic] * len(said)
        questions += asked
        question_topic += [topic] * len(asked)
    m, model = ai.embed_texts(messages, purpose="bench")
    q, _ = ai.embed_texts(questions, purpose="bench")
    similarity = np.array(q) @ np.array(m).T
    relevant = np.array([[qt == mt for mt in message_topic] for qt in question_topic])

    rows = []
    for threshold in np.arange(0.10, 0.71, 0.05):
        predicted = similarity >= threshold
        tp = int((predicted & relevant).sum())
        precision = tp / max(int(predicted.sum()), 1)
        recall = tp / int(relevant.sum())
        f1 = 2 * precision * recall / max(precision + recall, 1e-9)
        # What a user sees: does the best message pass, and is it relevant?
        top = similarity.argmax(axis=1)
        answered = float(np.mean([similarity[i, top[i]] >= threshold and relevant[i, top[i]] for i in range(len(q))]))
        rows.append(
            {
                "threshold": round(float(threshold), 2),
                "precision": round(precision, 3),
                "recall": round(recall, 3),
                "f1": round(f1, 3),
                "questions_answered": round(answered, 3),
            }
        )
    best = max(rows, key=lambda r: r["f1"])
    precise = min((r for r in rows if r["precision"] >= 0.9), key=lambda r: r["threshold"], default=None)
    print(
        json.dumps(
            {
                "model": model,
                "messages": len(messages),
                "questions": len(questions),
                "pairs": int(relevant.size),
                "relevant_similarity_mean": round(float(similarity[relevant].mean()), 3),
                "irrelevant_similarity_mean": round(float(similarity[~relevant].mean()), 3),
                "best_f1": best,
                "lowest_with_precision_0.9": precise,
                "table": rows,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
