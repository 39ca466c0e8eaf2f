"""All artifacts of a release, rendered from one snapshot: byte-identical for identical inputs.

Incremental builds: analysing entry text (segmentation, stemming, stopwords) is most of compiling
the index, and each entry's terms depend on that entry alone. An AnalysisCache keeps the terms of
the entries of a namespace's last build, so the next build analyses only the entries that changed.
The index itself is patched from the previous release's (knowledge.retrieval.patching) when its
reference statistics still hold, else compiled in full; either way the release is byte-identical to
a full build against the same reference statistics (tests/knowledge/test_incremental_release.py,
tests/knowledge/test_incremental_publish.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial

from knowledge.retrieval.calibration import (
    CALIBRATED,
    KEPT,
    Lineage,
    calibration_basis,
    calibration_record,
    carried,
    packing_automatic,
    threshold_automatic,
)
from knowledge.retrieval.container import unpack_arrays
from knowledge.retrieval.documents import Document
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.postings import Analyze, Collect, ReferenceStats, analyze_fields
from knowledge.retrieval.ranking import SearchOptions
from knowledge.retrieval.render.analysis_cache import AnalysisCache
from knowledge.retrieval.render.artifact import RenderedArtifact, etag_of  # noqa: F401 (served code imports it here)
from knowledge.retrieval.render.context_json import CONTEXT_GROUPS, context_json_pieces
from knowledge.retrieval.render.llms import (
    category_file,
    render_category_variants,
    render_llms_full_txt,
    render_llms_txt,
)
from knowledge.retrieval.render.markdown import render_index_md
from knowledge.retrieval.render.parts import PartsCache
from knowledge.retrieval.render.policy import render_ai_policy_json, render_ai_txt, render_robots_txt
from knowledge.retrieval.render.site import render_protected_json, render_site_json
from knowledge.retrieval.render.sitemap import SitemapFile, sitemap_files
from knowledge.retrieval.render.themes import render_theme_md, theme_file
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot
from knowledge.retrieval.tiers import (
    LEVELS,
    PROTECTED_JSON,
    PUBLIC,
    PUBLIC_INDEX,
    index_name,
    packable,
    tier_levels,
    visible,
)

JSON = "application/json; charset=utf-8"
MARKDOWN = "text/markdown; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
XML = "application/xml; charset=utf-8"
BINARY = "application/octet-stream"

CONTEXT_JSON = "context.json"
LLMS_TXT = "llms.txt"
LLMS_FULL_TXT = "llms-full.txt"
SEARCH_INDEX = PUBLIC_INDEX
SITE_JSON = "site.json"  # internal: what context.json leaves out of the snapshot (not served)
INDEX_MD = "index.html.md"
ROBOTS_TXT = "robots.txt"
AI_TXT = "ai.txt"
AI_POLICY_JSON = "ai-policy.json"
SITEMAP_XML = "sitemap.xml"
INDEX_NAMES = frozenset(index_name(level) for level in LEVELS)


def search_options(snapshot: Snapshot) -> SearchOptions:
    ranking = snapshot.ranking
    options = SearchOptions(ranker=ranking.ranker, match_threshold=ranking.match_threshold, packing=ranking.packing)
    if ranking.link_expansion is not None:
        options = replace(options, expand=ranking.link_expansion)
    return options


def compile_index(
    documents: Sequence[Document],
    snapshot: Snapshot,
    *,
    analysis: AnalysisCache | None = None,
    reference: ReferenceStats | None = None,
    lineage: Lineage | None = None,
    sequence: int = 0,
    previous: SearchIndex | None = None,
    keys: Sequence[bytes] | None = None,
) -> SearchIndex:
    """The release's index with its match threshold: the namespace's own, else calibrated here.

    With `analysis`, unchanged documents are not analysed again (the held-out calibration
    collection included: only the entries its pseudo-questions were cut from are new). `reference`:
    the statistics the lineage's last index was normalised against (kept unless they drifted);
    `previous`: that index, which the compile patches when it can (knowledge.retrieval.patching). With
    `lineage`, the calibration of the release this one follows is carried when it still holds.
    `keys`: the documents' document_key, when the caller has them (AnalysisCache.documents).
    """
    options = search_options(snapshot)
    if analysis is None:
        index = SearchIndex.compile(
            documents,
            options=options,
            synonyms=snapshot.synonyms,
            reference=reference,
            previous=previous,
            patchable=True,
        )
        return with_matching(index, documents, snapshot, analyze=analyze_fields, lineage=lineage, sequence=sequence)
    with analysis.building():
        index = SearchIndex.compile(
            documents,
            options=options,
            collect=analysis.collect,
            analyze=partial(analysis.fields, analyze=analyze_fields),
            synonyms=snapshot.synonyms,
            reference=reference,
            previous=previous,
            patchable=True,
            document_keys=keys,
        )
        collect = analysis.collect_uncounted
        return with_matching(
            index, documents, snapshot, analyze=analyze_fields, collect=collect, lineage=lineage, sequence=sequence
        )


def with_matching(
    index: SearchIndex,
    documents: Sequence[Document],
    snapshot: Snapshot,
    *,
    analyze: Analyze,
    collect: Collect | None = None,
    lineage: Lineage | None = None,
    sequence: int = 0,
) -> SearchIndex:
    """The index serving with the threshold the release records, and how it was obtained: calibrated
    by this build (release `sequence`), or carried from `lineage` without a calibration search."""
    ranking = snapshot.ranking
    if ranking.ranker != "bm25f":
        return index.with_threshold(0.0, {"source": "none", "note": "The seed ranker matches on any hit."})
    basis = calibration_basis(index)
    if ranking.match_threshold is not None:
        note = ranking.threshold_note or "Set on the namespace."
        kept = carried(lineage, source="namespace", basis=basis)
        if kept is None:
            packing = packing_automatic(index, documents, analyze=analyze, collect=collect)
            record = calibration_record(sequence=sequence, entries=len(documents), basis=basis)
        else:
            packing = {key: kept[key] for key in ("crowding", "pack_best_share")}
            packing["feedback"] = bool(kept.get("feedback", False))
            record = {key: kept[key] for key in _RECORD if key in kept}
        return index.with_threshold(
            ranking.match_threshold,
            {"source": "namespace", "threshold": ranking.match_threshold, "note": note, **packing, **record},
            pack_best_share=packing["pack_best_share"],
            feedback=bool(packing["feedback"]),
        )
    kept = carried(lineage, source="automatic", basis=basis)
    if kept is not None:
        return index.with_threshold(
            float(kept["threshold"]),
            kept,
            pack_best_share=float(kept["pack_best_share"]),
            feedback=bool(kept.get("feedback", False)),
        )
    had = carried(replace(lineage, changed=0, replay=True), source="automatic", basis=basis) if lineage else None
    chosen = threshold_automatic(
        index, documents, analyze=analyze, collect=collect, keep=None if had is None else float(had["threshold"])
    )
    provenance = CALIBRATED if chosen.calibrated is None else KEPT
    chosen = replace(
        chosen,
        lineage=calibration_record(sequence=sequence, entries=len(documents), basis=basis, provenance=provenance),
    )
    return index.with_threshold(
        chosen.threshold, chosen.to_meta(), pack_best_share=chosen.pack_best_share, feedback=chosen.feedback
    )


_RECORD = ("provenance", "calibrated_in", "calibrated_entries", "changed_since", "basis", "carried_from")


References = Mapping[str, ReferenceStats]  # per index artifact name
Indexes = Mapping[str, SearchIndex]  # per index artifact name


def tier_index(
    snapshot: Snapshot,
    stamp: ReleaseStamp,
    level: str,
    *,
    analysis: AnalysisCache | None = None,
    references: References | None = None,
    lineage: Lineage | None = None,
    previous: Indexes | None = None,
) -> SearchIndex:
    """The index a caller cleared for `level` searches: its visible entries that may be packed.
    `lineage` carries the public index's calibration (the wider tiers' are not recorded: they calibrate)."""
    tier = visible(snapshot, level)
    entries = packable(tier.entries, revision=stamp.revision)
    keys = None
    if analysis is None:
        documents = [entry.as_document() for entry in entries]
    else:
        documents, keys = analysis.documents(entries)
    name = index_name(level)
    reference = (references or {}).get(name)
    carry = lineage if level == PUBLIC else None
    return compile_index(
        documents,
        tier,
        analysis=analysis,
        reference=reference,
        lineage=carry,
        sequence=stamp.sequence,
        previous=(previous or {}).get(name),
        keys=keys,
    )


def index_references(artifacts: Sequence[RenderedArtifact]) -> dict[str, dict[str, object]]:
    """The reference statistics each index of a release was normalised against (for its manifest)."""
    found: dict[str, dict[str, object]] = {}
    for artifact in artifacts:
        if artifact.name in INDEX_NAMES:
            # Only its header, mapped: loading the index read the whole file and took its rows apart
            # (about 270 MiB above the build at 100,000 entries, issue 18 §3).
            meta, _ = unpack_arrays(artifact.mapped())
            reference = ReferenceStats.from_meta(meta.get("reference"))
            if reference is not None:
                found[artifact.name] = reference.to_meta()
    return found


def references_from(manifest: object) -> dict[str, ReferenceStats]:
    """The reference statistics a release's manifest records for its indexes (index_references; a
    release built before them has none): the next release of the namespace keeps them (issue 18), and
    rendering a pruned release again uses them."""
    stored = manifest.get("index") if isinstance(manifest, Mapping) else None
    found: dict[str, ReferenceStats] = {}
    for name, meta in stored.items() if isinstance(stored, dict) else ():
        reference = ReferenceStats.from_meta(meta if isinstance(meta, dict) else None)
        if reference is not None:
            found[name] = reference
    return found


def _context_json(public: Snapshot, stamp: ReleaseStamp, parts: PartsCache | None) -> Iterator[bytes]:
    if parts is None:
        yield from context_json_pieces(public, stamp)
        return
    with parts.building(), parts.building_files(CONTEXT_GROUPS):
        yield from context_json_pieces(public, stamp, parts=parts)


Progress = Callable[[str], None]


def _sitemap_artifact(file: SitemapFile) -> RenderedArtifact:
    return RenderedArtifact.written(file.name, XML, [file.render()])


def _sitemaps(public: Snapshot, stamp: ReleaseStamp, parts: PartsCache | None) -> Iterator[RenderedArtifact]:
    """The sitemap's files; with `parts`, a part whose key is unchanged since the last build is that
    build's very file (its bytes and ETag), not rendered and hashed again."""
    if parts is None:
        yield from (_sitemap_artifact(file) for file in sitemap_files(public, stamp))
        return
    with parts.building_files(SITEMAP_XML.removesuffix(".xml")):
        for file in sitemap_files(public, stamp):
            make = partial(_sitemap_artifact, file)
            yield make() if file.key is None else parts.file(file.name, file.key, make)


def render_release(
    snapshot: Snapshot,
    stamp: ReleaseStamp,
    *,
    analysis: AnalysisCache | None = None,
    parts: PartsCache | None = None,
    references: References | None = None,
    progress: Progress | None = None,
    lineage: Lineage | None = None,
    previous: Indexes | None = None,
    served: Callable[[RenderedArtifact, SearchIndex], None] | None = None,
) -> list[RenderedArtifact]:
    """Every artifact of the release; `analysis` and `parts` make the build incremental (same bytes).
    `references`: the reference statistics of the indexes of the release this one follows; `lineage`
    carries the calibration of the release it follows (calibration.carried); `previous`: the indexes
    of the release it follows, which the new ones patch when they can (same bytes again).

    Everything served as a file is rendered from the public view (tiers.visible); each wider
    clearance in use adds its own index, and protected.json keeps what the public files leave out.
    Memory: the indexes are compiled first (their compile is the build's largest transient, so no
    rendered file is held meanwhile), and every file above SPOOL_ABOVE is written to disk as it renders.
    `progress` is told each file's name once it is written. `served` is given the public index's file and
    the compiled index while it is still held (the build writes its host's copy from it).
    """
    public = visible(snapshot, PUBLIC)
    written: dict[str, RenderedArtifact] = {}

    def keep(artifact: RenderedArtifact) -> None:
        written[artifact.name] = artifact
        if progress is not None:
            progress(artifact.name)

    def write(name: str, content_type: str, pieces: Iterable[bytes | memoryview]) -> None:
        keep(RenderedArtifact.written(name, content_type, pieces))

    levels = tier_levels(snapshot)
    for level in levels:
        index = tier_index(
            snapshot, stamp, level, analysis=analysis, references=references, lineage=lineage, previous=previous
        )
        write(index_name(level), BINARY, index.to_pieces())
        if served is not None and level == PUBLIC:
            served(written[index_name(level)], index)
        del index  # its arrays go before the next compile
    write(CONTEXT_JSON, JSON, _context_json(public, stamp, parts))
    write(LLMS_TXT, MARKDOWN, [render_llms_txt(public, stamp)])
    write(LLMS_FULL_TXT, MARKDOWN, [render_llms_full_txt(public, stamp)])
    write(SITE_JSON, JSON, [render_site_json(public, stamp)])
    write(INDEX_MD, MARKDOWN, [render_index_md(public, stamp)])
    write(ROBOTS_TXT, TEXT, [render_robots_txt(public, stamp)])
    write(AI_TXT, TEXT, [render_ai_txt(public, stamp)])
    write(AI_POLICY_JSON, JSON, [render_ai_policy_json(public, stamp)])
    sitemaps = []
    for artifact in _sitemaps(public, stamp, parts):
        sitemaps.append(artifact.name)
        keep(artifact)
    variants = []
    for slug, short, full in render_category_variants(public, stamp):
        for kind, body in (("llms", short), ("llms-full", full)):
            variants.append(category_file(kind, slug))
            write(variants[-1], MARKDOWN, [body])
    themes = [theme_file(theme.slug) for theme in public.themes]
    for theme, name in zip(public.themes, themes, strict=True):
        write(name, MARKDOWN, [render_theme_md(public, stamp, theme)])
    if len(levels) > 1:
        write(PROTECTED_JSON, JSON, [render_protected_json(snapshot, stamp)])
    # The order the files have always been listed (and stored) in.
    order = [CONTEXT_JSON, LLMS_TXT, LLMS_FULL_TXT, SEARCH_INDEX, SITE_JSON, INDEX_MD, ROBOTS_TXT, AI_TXT]
    order += [AI_POLICY_JSON, *sitemaps, *variants, *themes, *(index_name(level) for level in levels[1:])]
    order += [PROTECTED_JSON] if len(levels) > 1 else []
    return [written[name] for name in order]
