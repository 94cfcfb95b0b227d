"""vidbench: evaluate multimodal LLMs on video and 4D object understanding."""

__version__ = "0.1.0"
