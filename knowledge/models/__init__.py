"""Models of the knowledge domain, split by concern."""

from knowledge.models.a2a import A2ATask as A2ATask
from knowledge.models.audit import AuditRecord
from knowledge.models.content import DocPage, EvaluationRun, Feedback, GoldenQuestion, PromptPack
from knowledge.models.entry import Entry, EntryVersion, VersionState
from knowledge.models.freshness import DueItem
from knowledge.models.gate import GateStatus, ReleaseGate
from knowledge.models.layers import NamespaceBase, WithdrawnEntry
from knowledge.models.namespace import (
    ApiKey,
    Category,
    IdBlock,
    Membership,
    Namespace,
    NamespaceHost,
    Role,
    Sensitivity,
)
from knowledge.models.observations import CitationCheck, GapStatus, KnowledgeGap, RequestLog
from knowledge.models.release import (
    Artifact,
    ArtifactBlob,
    ArtifactPart,
    BuildRequest,
    BuildStatus,
    Release,
    ReleaseBuild,
)
from knowledge.models.review import ReviewItem
from knowledge.models.synonyms import SynonymSet, SynonymVersion
from knowledge.models.texts import ReviewedText, TextKind, TextVersion
from knowledge.models.tokens import PersonalToken, TokenScope
from knowledge.models.webhooks import (
    ActivationKind,
    DeliveryStatus,
    ReleaseActivation,
    WebhookDelivery,
    WebhookEndpoint,
)

__all__ = [
    "ActivationKind",
    "ApiKey",
    "Artifact",
    "ArtifactBlob",
    "ArtifactPart",
    "AuditRecord",
    "BuildRequest",
    "BuildStatus",
    "Category",
    "CitationCheck",
    "DeliveryStatus",
    "DocPage",
    "DueItem",
    "Entry",
    "EntryVersion",
    "EvaluationRun",
    "Feedback",
    "GapStatus",
    "GateStatus",
    "GoldenQuestion",
    "IdBlock",
    "KnowledgeGap",
    "Membership",
    "Namespace",
    "NamespaceBase",
    "NamespaceHost",
    "PersonalToken",
    "PromptPack",
    "Release",
    "ReleaseActivation",
    "ReleaseBuild",
    "ReleaseGate",
    "RequestLog",
    "ReviewItem",
    "ReviewedText",
    "Role",
    "Sensitivity",
    "SynonymSet",
    "SynonymVersion",
    "TextKind",
    "TextVersion",
    "TokenScope",
    "VersionState",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WithdrawnEntry",
]
