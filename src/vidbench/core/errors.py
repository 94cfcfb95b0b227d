"""Error types. Every message names the file and the record it is about."""


class VidbenchError(Exception):
    """Base class of the errors vidbench raises on purpose."""


class ConfigError(VidbenchError):
    """A bad configuration (unknown task, model spec, option): stops a run at once."""


class DataError(VidbenchError):
    """A bad record or file in a dataset: the sample is recorded as an error, the run goes on."""


class MediaError(DataError):
    """A video that is missing, unreadable or too short for the frames asked for."""
