"""Deterministic, varied technical documentation (pages of chunks) and questions about it for bench/answer.py.

Each page belongs to one of twenty subsystems with its own components, settings, errors and metrics, so
words and meanings cluster by topic the way a real manual's do. Sentences come from ~60 templates filled
with page-specific names, numbers, versions and paths; no sentence occurs twice in a corpus (checked, and
redrawn on a clash). Chunk `i` depends only on the seed and on the chunks before it, so the first 10k
chunks of the 100k corpus are the 10k corpus (one embedding cache serves both).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass

TOPICS: dict[str, tuple[str, str, str, str]] = {
    # topic: (components, setting stems, errors, metrics) — comma-separated
    "database": ("connection pool,query planner,write-ahead log,replica,vacuum daemon,index builder,"
                 "migration runner,statement cache",
                 "pool_size,max_overflow,statement_timeout,wal_segment_size,autovacuum_scale,work_mem,"
                 "replica_lag_limit,idle_in_transaction_timeout",
                 "deadlock detected,too many clients,could not serialize access,relation does not exist,"
                 "canceling statement due to timeout",
                 "replication lag,buffer hit ratio,open connections,dead tuples"),
    "queue": ("broker,consumer group,dead-letter queue,prefetch buffer,acknowledgement tracker,retry scheduler,"
              "message router,visibility timer",
              "prefetch_count,visibility_timeout,max_redeliveries,ack_deadline,queue_max_length,consumer_timeout,"
              "retry_backoff_base,dead_letter_ttl",
              "message redelivered,consumer cancelled,channel closed by broker,queue length limit exceeded,"
              "unacked message timeout",
              "queue depth,redelivery rate,consumer lag,publish latency"),
    "cache": ("cache layer,eviction policy,key namespace,write-through store,warmup job,lock manager,"
              "serialization codec,replication stream",
              "max_memory,eviction_policy,default_ttl,key_prefix,lock_timeout,compression_threshold,"
              "read_replica_weight,stampede_guard",
              "OOM command not allowed,lock acquisition timed out,value too large,cache miss storm,"
              "connection reset by peer",
              "hit rate,evicted keys,memory fragmentation,lock wait time"),
    "auth": ("token issuer,session store,password hasher,OAuth callback,permission checker,audit trail,"
             "key rotation job,SSO connector",
             "token_lifetime,refresh_window,hash_iterations,session_cookie_age,allowed_redirect_uris,"
             "max_login_attempts,signing_key_id,clock_skew_leeway",
             "invalid signature,token expired,redirect URI mismatch,account locked,CSRF verification failed",
             "failed logins,token refreshes,active sessions,audit events"),
    "network": ("load balancer,reverse proxy,DNS resolver,keep-alive pool,TLS terminator,health checker,"
                "rate limiter,circuit breaker",
                "proxy_read_timeout,keepalive_requests,resolver_ttl,upstream_max_fails,health_interval,"
                "burst_size,breaker_threshold,client_max_body_size",
                "upstream timed out,connection refused,502 bad gateway,too many redirects,name resolution failed",
                "request latency,open sockets,retransmits,rejected requests"),
    "storage": ("object store,multipart uploader,lifecycle rule,block device,snapshot scheduler,checksum verifier,"
                "quota manager,garbage collector",
                "part_size,max_concurrent_parts,retention_days,snapshot_interval,checksum_algorithm,quota_bytes,"
                "gc_grace_period,storage_class",
                "checksum mismatch,quota exceeded,no such bucket,slow down,incomplete multipart upload",
                "bytes stored,upload throughput,orphaned parts,snapshot age"),
    "observability": ("metrics exporter,trace collector,log shipper,alert router,sampling rule,dashboard builder,"
                      "retention tier,label indexer",
                      "scrape_interval,sample_rate,batch_timeout,alert_for_duration,max_label_cardinality,"
                      "log_level,retention_period,flush_interval",
                      "sample limit exceeded,out of order samples,dropped spans,alert flapping,"
                      "label cardinality too high",
                      "active series,ingestion rate,dropped spans,alert count"),
    "deploy": ("container runtime,rollout controller,readiness probe,image registry,sidecar injector,"
               "config reloader,node autoscaler,secret mounter",
               "max_surge,max_unavailable,probe_period,image_pull_policy,termination_grace_period,"
               "replica_count,cpu_request,memory_limit",
               "CrashLoopBackOff,ImagePullBackOff,OOMKilled,readiness probe failed,evicted for disk pressure",
               "restart count,pod start time,pending pods,node pressure"),
    "ci": ("build runner,artifact cache,test sharder,pipeline trigger,release tagger,dependency resolver,"
           "coverage reporter,workspace cleaner",
           "cache_key,shard_count,job_timeout,artifact_expiry,retry_flaky,concurrency_group,fetch_depth,"
           "coverage_threshold",
           "job exceeded the maximum time,cache restore failed,no space left on device,"
           "dependency conflict,flaky test quarantined",
           "build duration,cache hit ratio,queued jobs,failure rate"),
    "search": ("inverted index,query parser,relevance scorer,shard allocator,synonym filter,highlighter,"
               "refresh scheduler,segment merger",
               "refresh_interval,number_of_shards,max_result_window,merge_factor,similarity_k1,"
               "synonym_path,highlight_fragment_size,query_timeout",
               "too many clauses,circuit breaking exception,shard not available,mapping conflict,"
               "result window is too large",
               "query latency,segment count,indexing rate,heap usage"),
    "web": ("request router,middleware chain,template engine,form validator,static file handler,"
            "session middleware,CORS filter,response compressor",
            "allowed_hosts,csrf_trusted_origins,static_root,max_upload_size,gzip_level,cors_allowed_origins,"
            "session_engine,template_cache_size",
            "disallowed host,CSRF token missing,request entity too large,template does not exist,"
            "method not allowed",
            "response time,error rate,requests per second,template render time"),
    "scheduler": ("cron parser,job store,leader election,missed-run handler,timezone resolver,lease keeper,"
                  "job executor,calendar exclusion",
                  "misfire_grace_time,max_instances,coalesce,lease_duration,timezone,jitter_seconds,"
                  "executor_pool_size,schedule_file",
                  "job missed its run time,lease lost,duplicate scheduler detected,invalid cron expression,"
                  "executor pool exhausted",
                  "missed runs,job duration,lease renewals,queue wait"),
    "pipeline": ("batch reader,stream joiner,watermark tracker,partition writer,schema registry,"
                 "backfill runner,dedup stage,checkpoint store",
                 "batch_size,watermark_delay,partition_count,checkpoint_interval,schema_compatibility,"
                 "dedup_window,max_parallelism,late_data_policy",
                 "schema incompatible,checkpoint timed out,late record dropped,partition skew detected,"
                 "offset out of range",
                 "records per second,checkpoint duration,watermark lag,late records"),
    "tls": ("certificate manager,ACME client,cipher suite list,OCSP stapler,key store,trust bundle,"
            "mutual TLS verifier,renewal timer",
            "renew_before_days,min_tls_version,cipher_preference,ocsp_cache_ttl,key_algorithm,trust_store_path,"
            "verify_depth,hsts_max_age",
            "certificate has expired,unknown certificate authority,handshake failure,hostname mismatch,"
            "OCSP response stale",
            "days to expiry,handshake errors,renewals,session resumptions"),
    "frontend": ("bundler,code splitter,asset hasher,hot reloader,polyfill loader,image optimizer,"
                 "service worker,source map uploader",
                 "chunk_size_warning,public_path,hash_length,target_browsers,image_quality,sourcemap_mode,"
                 "cache_busting,preload_strategy",
                 "module not found,chunk load failed,hydration mismatch,out of memory during build,"
                 "unexpected token",
                 "bundle size,build time,first contentful paint,cache hit rate"),
    "sync": ("sync engine,conflict resolver,offline queue,change feed,device registry,delta encoder,"
             "push notifier,tombstone sweeper",
             "sync_interval,conflict_strategy,offline_queue_limit,delta_threshold,tombstone_ttl,"
             "push_batch_size,device_limit,change_feed_retention",
             "sync conflict,change feed truncated,device limit reached,stale revision,push token invalid",
             "pending changes,sync duration,conflicts,active devices"),
    "ml": ("model server,feature store,batching queue,model registry,drift monitor,GPU scheduler,"
           "tokenizer cache,shadow deployment",
           "max_batch_size,batch_timeout_ms,model_version,feature_ttl,drift_threshold,gpu_memory_fraction,"
           "warmup_requests,shadow_traffic_percent",
           "model not found,CUDA out of memory,feature missing,input shape mismatch,drift alert raised",
           "inference latency,batch fill rate,GPU utilisation,prediction drift"),
    "billing": ("usage meter,invoice generator,rate plan,quota enforcer,webhook dispatcher,tax calculator,"
                "proration engine,payment retrier",
                "metering_interval,invoice_day,grace_period_days,quota_reset,webhook_retry_limit,tax_region,"
                "proration_mode,dunning_schedule",
                "card declined,quota exhausted,webhook signature invalid,duplicate invoice,currency mismatch",
                "metered events,failed payments,webhook retries,open invoices"),
    "email": ("mail transfer agent,bounce processor,template renderer,suppression list,DKIM signer,"
              "send queue,link tracker,feedback loop",
              "max_send_rate,bounce_threshold,dkim_selector,suppression_ttl,retry_schedule,tracking_domain,"
              "template_locale,queue_flush_interval",
              "mailbox unavailable,message rejected as spam,DKIM signature invalid,rate limit exceeded,"
              "relay access denied",
              "delivery rate,bounce rate,queue age,complaint rate"),
    "uploads": ("upload endpoint,virus scanner,thumbnail worker,chunked receiver,content-type sniffer,"
                "upload quota,resumable session,metadata extractor",
                "max_file_size,allowed_mime_types,chunk_size,scan_timeout,thumbnail_sizes,session_expiry,"
                "quota_per_user,metadata_fields",
                "file too large,unsupported media type,scan timed out,upload session expired,"
                "checksum does not match",
                "uploads per minute,scan backlog,thumbnail latency,rejected files"),
}
PRODUCTS = ("Atlas,Beacon,Cobalt,Drift,Ember,Falcon,Granite,Harbor,Ion,Juniper,Kestrel,Lumen,Meridian,Nimbus,"
            "Orchid,Pylon,Quartz,Raven,Summit,Tundra").split(",")
UNITS = {"ms": (50, 30000), "seconds": (1, 900), "MB": (16, 8192), "connections": (5, 500), "percent": (1, 95),
         "requests": (10, 5000), "days": (1, 90), "items": (8, 4096)}
VERBS = ("raise,lower,set,override,pin,disable,enable,tune,double,halve").split(",")
CAUSES = ("a burst of traffic after a deploy,a slow disk on one node,clock drift between hosts,a long-running "
          "transaction,an undersized instance,a misconfigured firewall rule,a stale DNS record,a memory leak in a "
          "plugin,an expired credential,a noisy neighbour on shared hardware,a schema change that was not "
          "backfilled,an upstream outage,a retry loop without backoff,a typo in the configuration file").split(",")
OPENERS = ("In practice,By default,Since version {version},On busy clusters,For most installations,In production,"
           "When in doubt,As a rule of thumb,Under heavy load,On small machines").split(",")

SENTENCES = [
    "{opener}, {product} keeps {setting} at {value} {unit}, which suits {component_a}s with modest traffic.",
    "If the {component_a} reports \"{error}\", check whether {cause} is involved before you {verb} {setting}.",
    "Set `{setting}` in `{path}` and restart the {component_a}; the new value is read only at start-up.",
    "The {component_a} exports {metric} every {small} seconds, so a dashboard can alert when it crosses {value}.",
    "Raising `{setting}` above {value} {unit} rarely helps: the {component_b} becomes the bottleneck instead.",
    "The `{command}` command prints the effective value of `{setting}` together with where it was defined.",
    "Upgrading from {version_old} to {version} changes the default of `{setting}` from {value_old} to {value}.",
    "When {metric} keeps growing, the {component_a} is usually waiting on the {component_b}, not on the network.",
    "Each {component_a} holds its own {component_b}, so two replicas need twice the `{setting}` budget.",
    "We saw \"{error}\" on {count} of {total} nodes during a load test; {cause} turned out to be the reason.",
    "To reproduce the problem locally, run `{command} --verbose` and watch {metric} while you replay traffic.",
    "A value of {value} {unit} for `{setting}` is a safe starting point; measure {metric} before changing it.",
    "{product} {version} logs \"{error}\" at warning level; earlier releases logged it only in debug mode.",
    "Do not {verb} `{setting}` on a live {component_a} without draining it first, or requests in flight fail.",
    "The {component_b} reads `{setting}` from the environment variable `{env}` when the file does not set it.",
    "Because the {component_a} retries after \"{error}\", a single fault can show up as {count} entries in the log.",
    "Keep `{setting}` below {value} {unit} if the {component_b} runs on the same host as the {component_a}.",
    "Our runbook for \"{error}\" starts with {metric}: if it is flat, the cause is elsewhere.",
    "{opener}, the {component_a} and the {component_b} share one thread pool sized by `{setting}`.",
    "Version {version} added `{setting}`; before that, the {component_a} used a fixed {value_old} {unit}.",
    "The health endpoint `{url}` returns 503 while the {component_a} is still replaying its {component_b}.",
    "After changing `{setting}`, compare {metric} over at least {small} minutes; short spikes are normal.",
    "`{command} --dry-run` shows which {component_b} entries would change without touching the {component_a}.",
    "If you run several {product} instances, give each one its own `{setting}` or they fight over the {component_b}.",
    "The error \"{error}\" means the {component_a} gave up after `{setting}` elapsed, not that the data is lost.",
    "The {component_a} writes a line to `{log}` each time the {component_b} is rebuilt, with the time it took.",
    "On {count} cores, {product} starts {count_b} workers for the {component_a} unless `{setting}` says otherwise.",
    "A common mistake is to {verb} `{setting}` and `{setting_b}` together; change one at a time.",
    "{opener}, {metric} above {value} {unit} is the first sign that the {component_b} needs attention.",
    "{product} rejects a `{setting}` of zero with \"{error}\" so that a typo cannot silently disable it.",
    "The migration guide for {version} lists `{setting_b}` as deprecated in favour of `{setting}`.",
    "Expect {metric} to drop by roughly {percent} percent once the {component_b} is warm.",
    "In the `{path}` file, `{setting}` accepts a number of {unit} or the keyword `auto`.",
    "When `{setting}` is `auto`, {product} derives it from the memory limit of the {component_a}.",
    "Operators who {verb} `{setting}` should also review `{setting_b}`, which bounds the same resource.",
    "Support tickets about \"{error}\" dropped by {percent} percent after we documented `{setting}`.",
    "The {component_b} is optional; without it, the {component_a} falls back to polling every {small} seconds.",
    "Run `{command} check` after every upgrade: it validates `{setting}` and `{setting_b}` against the schema.",
    "{product} sends {metric} to the metrics exporter with the label `{label}` set to the {component_a} name.",
    "Restarting the {component_a} clears \"{error}\" for a while, but it returns unless {cause} is fixed.",
    "During a rolling upgrade to {version}, old and new {component_a}s disagree on `{setting}` for a few minutes.",
    "Large deployments often pin `{setting}` to {value} {unit} and scale out {component_b}s instead.",
    "For a test environment, `{setting}` can be as low as {value_old} {unit}, which keeps start-up fast.",
    "The {component_a} validates each request against `{setting_b}` before handing it to the {component_b}.",
    "An alert on {metric} that fires every night usually points at a batch job, not at the {component_a}.",
    "If `{command}` exits with status {status}, the {component_b} could not be reached within `{setting}`.",
    "{product} {version_old} had a bug where `{setting}` was ignored when `{setting_b}` was also set.",
    "Note that the {component_a} measures `{setting}` in {unit}, while the {component_b} uses seconds.",
    "Tracing a slow request usually shows most of the time spent in the {component_b}, rarely in the {component_a}.",
    "The default `{setting}` of {value} {unit} assumes {count} clients; multiply it for larger fleets.",
    "A {component_a} that logs \"{error}\" repeatedly should be taken out of rotation until it recovers.",
    "Backups of the {component_b} include `{setting}` but not `{setting_b}`, which lives in `{path}`.",
    "Why does {metric} spike at start-up? The {component_a} rebuilds the {component_b} before serving traffic.",
    "Use `{env}={value}` to try a new `{setting}` for one process without editing `{path}`.",
    "Setting `{setting}` too high hides \"{error}\" for a while and makes the eventual failure harder to read.",
    "With {count_b} replicas and `{setting}` at {value}, the {component_b} needed about {mem} MB of memory.",
    "{opener}, leave `{setting_b}` alone and adjust `{setting}` first; it has the larger effect on {metric}.",
    "The `{label}` label on {metric} tells you which {component_a} is behind when several share a {component_b}.",
    "Since {version}, the {component_a} refuses to start when `{setting}` is larger than `{setting_b}`.",
    "Check `{log}` for \"{error}\"; each entry names the {component_b} and the value of `{setting}` in force.",
]
TITLES = ["Tuning the {component_a}", "Troubleshooting \"{error}\"", "Configuring `{setting}`",
          "How the {component_a} uses the {component_b}", "Monitoring {metric}", "Upgrading {product} to {version}",
          "Sizing the {component_b}", "{product} {component_a} reference", "Running the {component_a} in production"]
QUESTIONS = [
    "How do I change {setting} for the {component_a}?", "What does \"{error}\" mean in {product}?",
    "Why does {metric} keep growing on the {component_a}?", "What is the default value of {setting}?",
    "How should I size {setting} when the {component_b} runs on the same host?",
    "{product} {component_a} logs {error}, what should I check first?",
    "Which setting limits {component_b} of the {component_a}?", "Is it safe to raise {setting} on a live node?",
    "How can I monitor {metric} for the {component_b}?", "What changed about {setting} in version {version}?",
]


@dataclass(frozen=True)
class CorpusChunk:
    """One chunk as the product stores it: text, its page's title and key, and its place in the page."""

    text: str
    title: str
    doc_key: str
    chunk_index: int
    source: int


def _split(field: str) -> list[str]:
    return [part.strip() for part in field.split(",")]


@dataclass
class _Page:
    """What one page is about: its topic's names, plus page-specific product, version, paths and values."""

    rng: random.Random
    topic: str
    product: str
    components: list[str]
    settings: list[str]
    errors: list[str]
    metrics: list[str]
    version: str
    number: int

    @classmethod
    def draw(cls, rng: random.Random, number: int) -> _Page:
        topic = rng.choice(sorted(TOPICS))
        components, settings, errors, metrics = (_split(field) for field in TOPICS[topic])
        product = rng.choice(PRODUCTS)
        version = f"{rng.randint(1, 9)}.{rng.randint(0, 24)}"
        rng.shuffle(components)
        rng.shuffle(settings)
        return cls(rng, topic, product, components[:4], settings[:5], errors, metrics, version, number)

    def slots(self) -> dict[str, str]:
        rng = self.rng
        unit = rng.choice(sorted(UNITS))
        low, high = UNITS[unit]
        setting, setting_b = rng.sample(self.settings, 2)
        component_a, component_b = rng.sample(self.components, 2)
        major, minor = (int(part) for part in self.version.split("."))
        return {
            "product": self.product, "component_a": component_a, "component_b": component_b,
            "setting": setting, "setting_b": setting_b, "error": rng.choice(self.errors),
            "metric": rng.choice(self.metrics), "unit": unit, "value": str(rng.randint(low, high)),
            "value_old": str(rng.randint(low, high)), "verb": rng.choice(VERBS), "cause": rng.choice(CAUSES),
            "opener": rng.choice(OPENERS).format(version=self.version), "version": self.version,
            "version_old": f"{major}.{max(0, minor - rng.randint(1, 4))}" if minor else f"{max(1, major - 1)}.9",
            "path": f"/etc/{self.product.lower()}/{self.topic}.{rng.choice(['toml', 'yaml', 'conf', 'ini'])}",
            "log": f"/var/log/{self.product.lower()}/{component_a.replace(' ', '-')}.log",
            "env": f"{self.product.upper()}_{setting.upper()}", "small": str(rng.randint(2, 60)),
            "command": f"{self.product.lower()}ctl {self.topic} {rng.choice(['show', 'inspect', 'status', 'config'])}",
            "count": str(rng.randint(2, 64)), "count_b": str(rng.randint(2, 32)), "total": str(rng.randint(65, 400)),
            "percent": str(rng.randint(5, 80)), "status": str(rng.randint(2, 9)), "mem": str(rng.randint(64, 9000)),
            "url": f"/healthz/{component_a.replace(' ', '-')}", "label": rng.choice(["instance", "shard", "role"]),
        }


class CorpusWriter:
    """Pages of chunks in order; `chunks(n)` yields the first n chunks of the corpus for this seed."""

    def __init__(self, seed: int = 13, sources: int = 40) -> None:
        self._rng = random.Random(seed)
        self._sources = sources
        self._seen: set[bytes] = set()
        self.duplicates_redrawn = 0

    def _sentence(self, page: _Page) -> str:
        for _ in range(20):
            text = page.rng.choice(SENTENCES).format(**page.slots())
            key = text_key(text)
            if key not in self._seen:
                self._seen.add(key)
                return text
            self.duplicates_redrawn += 1
        raise RuntimeError("could not draw an unseen sentence in 20 tries")

    def _chunk_text(self, page: _Page, first: bool, title: str) -> str:
        words, parts = page.rng.randint(85, 135), [f"## {title}\n"] if first else []
        count = 0
        while count < words:
            sentence = self._sentence(page)
            parts.append(sentence)
            count += len(sentence.split())
        return " ".join(parts)

    def chunks(self, count: int) -> Iterator[CorpusChunk]:
        made, number = 0, 0
        while made < count:
            page = _Page.draw(self._rng, number)
            title = self._rng.choice(TITLES).format(**page.slots())
            key = f"https://docs.example.com/{page.product.lower()}/{page.topic}/page-{number}"
            for index in range(min(self._rng.randint(3, 12), count - made)):
                text = self._chunk_text(page, index == 0, title)
                yield CorpusChunk(text, title, key, index, source=1 + number % self._sources)
                made += 1
            number += 1


def questions(count: int, seed: int = 99) -> list[str]:
    """Questions in the corpus' vocabulary (drawn like its pages, so each has on-topic chunks)."""
    rng = random.Random(seed)
    return [rng.choice(QUESTIONS).format(**_Page.draw(rng, i).slots()) for i in range(count)]


def text_key(text: str) -> bytes:
    """8 bytes that identify a chunk's text (duplicate check here, cache rows in answer_vectors)."""
    return hashlib.blake2b(text.encode(), digest_size=8).digest()
