"""What an archive holds: the models in the order they are restored, and what is left out on purpose."""

from __future__ import annotations

# Parents before children, so natural keys (usernames) resolve; cycles (a session's root question) rely on
# the foreign keys being checked at commit, as Django creates them on PostgreSQL and SQLite.
EXPORTED = (
    "auth.group",
    "auth.user",
    "core.settings",
    "gurus.guru",
    "gurus.examplequestion",
    "sources.datasource",
    "sources.githubfile",
    "sources.sourcepage",
    "sources.summarization",
    "answering.binge",
    "answering.question",
    "answering.citation",
    "answering.memory",
    "evaluation.evalset",
    "evaluation.evalitem",
    "evaluation.evalrun",
    "api.apikey",
    "widget.widgetid",
    "integrations.integration",
    "integrations.thread",
    "integrations.chatmessage",
)
# Matched by name in the target (usernames, group names): an account that exists there is kept as it is.
NATURAL = frozenset({"auth.group", "auth.user"})
LEFT_OUT = {
    "core.counter": "rate-limit and login counters expire within minutes",
    "core.lease": "locks held by running processes",
    "gurus.vectorcollection": "rebuilt by the import for this install's vector store and collection prefix",
    "sessions.session": "sessions are signed with the old install's secret key: users sign in again",
    "admin.logentry": "the admin's change history refers to content-type ids of the old database",
    "auth.permission": "created by migrate",
    "contenttypes.contenttype": "created by migrate",
    "integrations.chatevent": "Slack event ids kept two days so retries count once; none are retried across installs",
    "integrations.oauthstate": "single-use nonces of installs in progress, valid for ten minutes",
    "sources.sourceterm": "counted again from the imported chunks when a worker starts (sources.term_stats_recover)",
    "sources.sourcetermstats": "counted again with the source's terms",
    "sources.documentnode": "the source graph is rebuilt from the imported chunks when a worker starts "
                            "(sources.graph_recover)",
    "sources.documentedge": "rebuilt with the source graph",
    "sources.sourcegraphstate": "rebuilt with the source graph",
}
# A target holding any of these is not empty: importing would mix two installs' ids.
CONTENT = ("gurus.guru", "sources.datasource", "answering.binge", "answering.question", "api.apikey",
           "widget.widgetid", "integrations.integration")
# Uploaded files, by the model and field that name them.
MEDIA_FIELDS = {"gurus.guru": "icon", "sources.datasource": "file"}
