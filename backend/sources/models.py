"""Data sources, the files of Git repositories, the pages of websites, summarisation trees, term counts and the
source graph."""

from __future__ import annotations

from django.db import models

from backend.core.fields import EncryptedTextField
from backend.core.models import TimeStampedModel
from backend.gurus.models import Guru


class SourceKind(models.TextChoices):
    YOUTUBE = "YOUTUBE", "YouTube video"
    WEBSITE = "WEBSITE", "Website"
    PDF = "PDF", "PDF document"
    GITHUB_REPO = "GITHUB_REPO", "Git repository"


class SourceStatus(models.TextChoices):
    PENDING = "PENDING", "Pending"
    PROCESSING = "PROCESSING", "Processing"
    INDEXED = "INDEXED", "Indexed"
    FAILED = "FAILED", "Failed"


class SummaryState(models.TextChoices):
    QUEUED = "QUEUED", "Queued"
    RUNNING = "RUNNING", "Summarising"
    DONE = "DONE", "Summarised"
    OVER_BUDGET = "OVER_BUDGET", "Stopped at the token budget"
    FAILED = "FAILED", "Failed"


def source_upload_path(instance: DataSource, filename: str) -> str:
    """Files live under the guru's folder so deleting a guru removes them in one step."""
    return f"sources/{instance.guru_id}/{filename}"


class DataSource(TimeStampedModel):
    """One thing a guru learns from: a video, a web page, a PDF or a repository."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=20, choices=SourceKind.choices)
    url = models.URLField(max_length=2000, blank=True)
    file = models.FileField(upload_to=source_upload_path, max_length=500, blank=True)
    title = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=12, choices=SourceStatus.choices, default=SourceStatus.PENDING)
    error_message = models.TextField(blank=True, help_text="Shown to maintainers when indexing failed.")
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64, blank=True)
    # Each index run gets a new generation and claims the source with it; chunks are written under
    # it before older generations are deleted, so a crash mid-way leaves the previous index answering.
    generation = models.PositiveIntegerField(default=0)
    indexed_generation = models.PositiveIntegerField(
        null=True, blank=True, help_text="The generation whose chunks answer questions (None: never indexed)."
    )
    chunk_count = models.PositiveIntegerField(default=0)
    private = models.BooleanField(default=False, help_text="Hide links to this source in answers.")
    options = models.JSONField(default=dict, blank=True, help_text="Kind-specific: branch, globs, crawl.")
    access_token = EncryptedTextField(blank=True, help_text="Token for a private repository (encrypted).")
    last_indexed_at = models.DateTimeField(null=True, blank=True)
    # When the current run was claimed; with progress_done/total it gives the dashboard's ETA.
    indexing_started_at = models.DateTimeField(null=True, blank=True)
    # Proof of life of the current run: set when it is queued, then every few seconds while it runs.
    # A PENDING/PROCESSING source whose stamp is old has no live task, and recovery re-queues it.
    heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)
    recoveries = models.PositiveSmallIntegerField(
        default=0, editable=False, help_text="Times recovery re-queued the current run after its task died."
    )
    reindex_count = models.PositiveIntegerField(default=0)
    # The summary tree's own progress, apart from indexing's: summarising never holds up answering.
    summary_state = models.CharField(max_length=12, choices=SummaryState.choices, blank=True, default="")
    summary_done = models.PositiveIntegerField(default=0)
    summary_total = models.PositiveIntegerField(default=0)
    summary_note = models.CharField(max_length=500, blank=True, help_text="Why the summary is missing or partial.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["guru", "status"])]
        constraints = [
            models.UniqueConstraint(
                fields=["guru", "url"], condition=~models.Q(url=""), name="source_unique_url_per_guru"
            ),
            models.UniqueConstraint(
                fields=["guru", "content_hash"],
                condition=models.Q(kind="PDF") & ~models.Q(content_hash=""),
                name="source_unique_pdf_per_guru",
            ),
            models.CheckConstraint(
                condition=~models.Q(url="") | ~models.Q(file=""), name="source_has_url_or_file"
            ),
            models.CheckConstraint(
                condition=models.Q(progress_done__lte=models.F("progress_total")) | models.Q(progress_total=0),
                name="source_progress_bounded",
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.url or self.file.name or ""


class GithubFile(models.Model):
    """One file of an indexed repository; re-sync diffs by blob sha."""

    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="github_files")
    path = models.CharField(max_length=1000)
    blob_sha = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    link = models.CharField(max_length=2000)
    in_index = models.BooleanField(default=False)
    chunk_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["path"]
        constraints = [
            models.UniqueConstraint(fields=["source", "path"], name="githubfile_unique_path"),
        ]

    def __str__(self) -> str:
        return self.path


class PageStatus(models.TextChoices):
    INDEXED = "INDEXED", "Indexed"
    FAILED = "FAILED", "Failed"


class SourcePage(models.Model):
    """One page of a multi-page website source (sitemap or crawl), as its last index run found it.

    Rows are replaced by each run; `normalized_url` lets other sources ask whether a page is already covered.
    """

    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="pages")
    url = models.URLField(max_length=2000)
    normalized_url = models.CharField(max_length=2000, db_index=True)
    title = models.CharField(max_length=500, blank=True)
    position = models.PositiveIntegerField(default=0, help_text="Order in which the run found the page.")
    status = models.CharField(max_length=10, choices=PageStatus.choices, default=PageStatus.INDEXED)
    error = models.TextField(blank=True)
    chunk_count = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the page's text.")
    last_indexed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["source", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "url"], name="sourcepage_unique_url"),
        ]

    def __str__(self) -> str:
        return self.title or self.url


class Summarization(TimeStampedModel):
    """A node of a summary tree: per-source leaves merged recursively up to one guru summary."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="summarizations")
    source = models.ForeignKey(
        DataSource, on_delete=models.CASCADE, null=True, blank=True, related_name="summarizations"
    )
    parent = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="children"
    )
    level = models.PositiveSmallIntegerField(default=0)
    position = models.PositiveIntegerField(default=0, help_text="Order within its level (reading order).")
    is_root = models.BooleanField(default=False, help_text="The guru's summary: the top of the guru's tree.")
    is_source_root = models.BooleanField(default=False, help_text="The source's summary: the top of its tree.")
    # What the node was made from (a piece's text, or its children's hashes) and how: equal hashes are
    # re-used instead of re-summarised, so an edit re-summarises only its pieces and the path above them.
    content_hash = models.CharField(max_length=64, db_index=True, default="")
    extractive = models.BooleanField(default=False, help_text="Sentences picked from the text, not written by a model.")
    vector_written = models.BooleanField(default=False, editable=False,
                                         help_text="Embedded into the guru's collection, so retrieval finds it.")
    text = models.TextField()
    model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["guru", "level", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["guru"], condition=models.Q(is_root=True), name="summarization_one_root_per_guru"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.guru} summary L{self.level}"


class SourceTerm(models.Model):
    """How many of a source's live chunks contain a term (the reranker's stems): a guru's document frequencies.

    Rows are replaced as a whole by each refresh, together with the source's SourceTermStats.
    """

    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="terms")
    term = models.CharField(max_length=64)
    df = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "term"], name="sourceterm_unique_term"),
        ]
        # Answering asks for a few terms over a guru's sources: the term leads.
        indexes = [models.Index(fields=["term", "source"], name="sourceterm_term_source")]

    def __str__(self) -> str:
        return f"{self.term} ({self.df})"


class SourceTermStats(models.Model):
    """Its presence means the source's SourceTerm rows are complete for the indexed state it records."""

    source = models.OneToOneField(DataSource, on_delete=models.CASCADE, related_name="term_stats")
    chunks = models.PositiveIntegerField(help_text="Live chunks the document frequencies were counted over.")
    generation = models.IntegerField(help_text="The source's indexed_generation when they were counted.")
    # A Git repository syncs in place (its generation stays 0): its last_indexed_at tells one sync from the next.
    indexed_at = models.DateTimeField(null=True, blank=True,
                                      help_text="The source's last_indexed_at when they were counted.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"terms of source {self.source_id} ({self.chunks} chunks)"


class EdgeKind(models.TextChoices):
    """What connects two documents (see pipeline.source_graph)."""

    LINK = "link", "Links to"
    IMPORT = "import", "Imports"
    DUPLICATE = "duplicate", "Same text as"
    NEAR_DUPLICATE = "near_duplicate", "Nearly the same text as"


class DocumentNode(models.Model):
    """One document of a live source (a page, a file, a PDF page, a video) as the guru's source graph knows it.

    The graph's rows are replaced as a whole by each refresh (sources.graph), with the guru's SourceGraphState.
    """

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="document_nodes")
    source = models.ForeignKey(DataSource, on_delete=models.CASCADE, related_name="document_nodes")
    key = models.CharField(max_length=2000, help_text="The document within its source: URL, file path, page-N.")
    title = models.CharField(max_length=500, blank=True)
    link = models.CharField(max_length=2000, blank=True)
    chunk_ids = models.JSONField(default=list, help_text="Its first chunks of the refresh's index, in order.")
    breadcrumbs = models.JSONField(default=list, help_text="Its place: directories of its path or URL.")

    class Meta:
        ordering = ["source", "key"]
        indexes = [models.Index(fields=["guru", "source"], name="documentnode_guru_source")]

    def __str__(self) -> str:
        return self.title or self.key


class DocumentEdge(models.Model):
    """A connection the sources state between two documents of one guru: a link, an import, the same text."""

    guru = models.ForeignKey(Guru, on_delete=models.CASCADE, related_name="document_edges")
    origin = models.ForeignKey(DocumentNode, on_delete=models.CASCADE, related_name="outgoing")
    target = models.ForeignKey(DocumentNode, on_delete=models.CASCADE, related_name="incoming")
    kind = models.CharField(max_length=16, choices=EdgeKind.choices)
    score = models.FloatField(default=1.0, help_text="1 for what the text states; the overlap for near-duplicates.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["origin", "target", "kind"], name="documentedge_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.origin_id} {self.kind} {self.target_id}"


class SourceGraphState(models.Model):
    """Its presence means the guru's graph rows are complete for the live sources its signature records."""

    guru = models.OneToOneField(Guru, on_delete=models.CASCADE, related_name="graph_state")
    signature = models.CharField(max_length=64, help_text="Hash of the live sources and their index times.")
    documents = models.PositiveIntegerField(default=0)
    edges = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"graph of guru {self.guru_id} ({self.documents} documents, {self.edges} edges)"
