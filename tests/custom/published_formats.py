"""Two well-known video benchmarks' published row formats, written by the tests exactly as the
benchmarks publish them (no download), and the benchmark.toml that points vidbench at each
(docs/custom-gallery.md shows the same files; gallery.py runs them).

Video-MME (lmms-lab/Video-MME on the Hugging Face Hub, videomme/test-00000-of-00001.parquet):
one row per question with video_id, duration, domain, sub_category, url, videoID, question_id,
task_type, question, options ["A. ...", ...] and answer "A"; the videos unpacked to
data/<videoID>.mp4. The prompt and the answer extraction are those of Video-MME's README and
evaluation/eval_your_results.py.

MVBench (OpenGVLab/MVBench: json/<task>.json, one per task): a JSON list of {video, question,
candidates [...], answer (the right candidate's text)}, with start and end (seconds) in the
tasks whose clips are windows of longer videos; each task's videos in a folder of their own
(video/star/Charades_v1_480/, video/ssv2_video/, ...). The prompt is that of Ask-Anything's
mvbench.ipynb.
"""

from __future__ import annotations

import json
from pathlib import Path

from custom_support import write_clip, write_rows

VIDEOMME_TOML = '''name = "video-mme"
title = "Video-MME (without subtitles)"
rows = "videomme/test-00000-of-00001.parquet"
id = "question_id"
video = "data/{videoID}.mp4"
question = "question"
options = "options"
answer = "answer"
groups = ["duration", "domain", "task_type"]
option_format = "{letter}. {text}"
prompt = """Select the best answer to the following multiple-choice question based on the \
video. Respond with only the letter (A, B, C, or D) of the correct option.
{question}
{options}
The best answer is:"""
parser = "videomme"
unparsed = "drop"
frames = 8
'''

# Video-MME's README prompt example, without subtitles.
VIDEOMME_README_PROMPT = (
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option.\n"
    "What is the color of the clothing worn by the persons in the video?\n"
    "A. Black.\nB. Gray.\nC. Green.\nD. Brown.\n"
    "The best answer is:"
)


def videomme_row(
    n: int, video: str, duration: str, domain: str, answer: str, question: str
) -> dict:
    number = "001" if duration == "short" else "002"
    return {
        "video_id": number,
        "duration": duration,
        "domain": domain,
        "sub_category": "Humanity & History" if domain == "Knowledge" else "Basketball",
        "url": f"https://www.youtube.com/watch?v={video}",
        "videoID": video,
        "question_id": f"{number}-{n}",
        "task_type": "Counting Problem" if n == 3 else "Attribute Perception",
        "question": question,
        "options": ["A. Black.", "B. Gray.", "C. Green.", "D. Brown."],
        "answer": answer,
    }


VIDEOMME_ROWS = [
    videomme_row(
        1, "fFjv93ACGo8", "short", "Knowledge", "A", VIDEOMME_README_PROMPT.split("\n")[1]
    ),
    videomme_row(2, "fFjv93ACGo8", "short", "Knowledge", "B", "What colour is the table?"),
    videomme_row(3, "fFjv93ACGo8", "short", "Knowledge", "C", "How many people are there?"),
    videomme_row(1, "Xk2d9sQw1l1", "medium", "Sports Competition", "D", "What colour is the ball?"),
    videomme_row(2, "Xk2d9sQw1l1", "medium", "Sports Competition", "A", "What colour is the net?"),
    videomme_row(3, "Xk2d9sQw1l1", "medium", "Sports Competition", "B", "How many players?"),
]


def write_videomme(root: Path) -> Path:
    write_rows(root / "videomme" / "test-00000-of-00001.parquet", VIDEOMME_ROWS)
    for i, row in enumerate({r["videoID"]: r for r in VIDEOMME_ROWS}.values()):
        write_clip(root / "data" / f"{row['videoID']}.mp4", 50 + 80 * i, frames=16)
    (root / "benchmark.toml").write_text(VIDEOMME_TOML)
    return root


MVBENCH_TOML = '''name = "mvbench"
question = "question"
options = "candidates"
answer = "answer"
answer_format = "text"
groups = ["task"]
start = "start"
end = "end"
system = """Carefully watch the video and pay attention to the cause and sequence of events, \
the detail and movement of objects, and the action and pose of persons. Based on your \
observations, select the best option that accurately addresses the question."""
prompt = """Question: {question}
Options:
{options}
Only give the best option."""
frames = 16

[[rows]]
path = "json/action_sequence.json"
video = "video/star/Charades_v1_480/{video}"
set = { task = "Action Sequence" }

[[rows]]
path = "json/action_count.json"
video = "video/perception/videos/{video}"
set = { task = "Action Count" }
'''

MVBENCH = {
    "action_sequence": [
        {
            "video": "ZS9XR.mp4",
            "question": "What happened after the person took the food?",
            "candidates": [
                "Ate the medicine.",
                "Tidied up the blanket.",
                "Put down the cup/glass/bottle.",
                "Took the box.",
            ],
            "answer": "Put down the cup/glass/bottle.",
            "start": 0.5,
            "end": 1.5,
        },
        {
            "video": "ZS9XR.mp4",
            "question": "What happened before the person opened the door?",
            "candidates": ["Took the towel.", "Sat on the bed.", "Closed the window."],
            "answer": "Took the towel.",
            "start": 0.25,
            "end": 1.75,
        },
    ],
    "action_count": [
        {
            "video": "video_10.mp4",
            "question": "How many times did the person launch objects on the table?",
            "candidates": ["3", "2", "4"],
            "answer": "2",
        },
    ],
}
MVBENCH_FOLDERS = {"action_sequence": "star/Charades_v1_480", "action_count": "perception/videos"}


def write_mvbench(root: Path) -> Path:
    for task, rows in MVBENCH.items():
        (root / "json").mkdir(parents=True, exist_ok=True)
        (root / "json" / f"{task}.json").write_text(json.dumps(rows, indent=1))
        for row in rows:
            write_clip(root / "video" / MVBENCH_FOLDERS[task] / row["video"], 60, frames=48)
    (root / "benchmark.toml").write_text(MVBENCH_TOML)
    return root
