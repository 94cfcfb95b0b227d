"""Plain typed records shared by every layer. No heavy imports here."""

from vidbench.core.errors import ConfigError, DataError, MediaError, VidbenchError
from vidbench.core.messages import ImagePart, Message, Part, TextPart
from vidbench.core.records import MediaRef, Sample, SampleKind
from vidbench.core.requests import GenerationConfig, Request, Response, Usage

__all__ = [
    "ConfigError",
    "DataError",
    "GenerationConfig",
    "ImagePart",
    "MediaError",
    "MediaRef",
    "Message",
    "Part",
    "Request",
    "Response",
    "Sample",
    "SampleKind",
    "TextPart",
    "Usage",
    "VidbenchError",
]
