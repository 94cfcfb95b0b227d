"""MMWorld prompts, from the official evaluation script (README.md; paper appendix C).

`open` (default): the prompt of the script's `answer_generator`, used for the open models and, with
the video frames, for Gemini and Claude; the frames come first, then the text. `{options}` is the
question's options object as Python prints a dict (`{'a': '...', 'b': '...'}`), exactly what the
script's f-string pasted in.

`api`: the script's GPT-4o prompt: a system message asking to end with "{END}" (the script sent
`stop="{END}"`; vidbench cuts replies at the mark instead) and a user turn with the text first,
then the frames.

Subtitles (vidbench's wording; the paper gives none): when the variant asks for them and the
sample has a transcript, "Subtitles of the video:" and the transcript precede the prompt text.
"""

from __future__ import annotations

from collections.abc import Sequence

from vidbench.benchmarks.mmworld.loader import meta
from vidbench.core.messages import Message, Part, TextPart
from vidbench.core.records import Sample
from vidbench.media.frame import Frame

OPEN_PROMPT = (
    "Answer the question {question} by selecting one from the giving answers {options}. "
    "Respond with only single letter such as a, b, c ,d."
)
API_SYSTEM = (
    "You are an expert in assisting humans. Follow the user prompt in a completion mode. "
    "Generate precise and clear response. End your response with {END}."
)
API_PROMPT = (
    "Based on the following video frames extracted from the video, answer the question "
    "{question} by selecting one from the giving answers {options}."
)
SUBTITLES = "Subtitles of the video:\n{transcript}\n\n"


def prompt_text(sample: Sample, style: str, subtitles: bool) -> str:
    template = OPEN_PROMPT if style == "open" else API_PROMPT
    options = meta(sample)["options_in_file"]
    text = template.format(question=sample.question, options=str(options))
    transcript = sample.metadata.get("transcript")
    if subtitles and transcript:
        text = SUBTITLES.format(transcript=transcript) + text
    return text


def build_messages(
    sample: Sample, frames: Sequence[Frame], style: str, subtitles: bool
) -> tuple[Message, ...]:
    text = TextPart(prompt_text(sample, style, subtitles))
    images: list[Part] = [frame.image for frame in frames]
    if style == "open":
        return (Message("user", (*images, text)),)
    return (
        Message("system", (TextPart(API_SYSTEM),)),
        Message("user", (text, *images)),
    )
