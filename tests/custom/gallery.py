"""The gallery of docs/custom-gallery.md: public video QA sets' published row layouts, each as a
small fixture written in exactly that layout (the field names, nesting, types and file kinds the
sets publish; the values are made up), the benchmark.toml that reads it without converting it,
and replies whose accuracy is known by hand. benchmarks/custom/README.md says where each layout
comes from. test_gallery.py runs every entry and checks that the page shows the same files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from published_formats import MVBENCH, MVBENCH_FOLDERS, MVBENCH_TOML, VIDEOMME_ROWS, VIDEOMME_TOML

from custom_support import write_clip, write_rows

PAGE = Path(__file__).resolve().parents[2] / "docs" / "custom-gallery.md"


@dataclass(frozen=True)
class Entry:
    name: str  # the folder the page writes it to
    toml: str
    files: dict[str, str]  # path -> the file's exact text (the page writes the same)
    videos: dict[str, float]  # path -> seconds of video it needs at least
    replies: dict[str, str]  # sample id -> the model's reply (predictions:FILE)
    columns: dict[str, float]  # the results' columns, worked out by hand
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # Parquet files
    no_gold: int = 0


def dumps(value: Any) -> str:
    """JSON as a person would write a small file: a record or a value a line where they are flat
    (a list of records, an object of values), indented otherwise."""
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return "[\n" + ",\n".join(f" {json.dumps(v)}" for v in value) + "\n]\n"
    if isinstance(value, dict) and not any(isinstance(v, dict | list) for v in value.values()):
        return (
            "{\n"
            + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            + "\n}\n"
        )
    return json.dumps(value, indent=1) + "\n"


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# ---------------------------------------------------------------- NExT-QA (CSV, a0..a4, index)
NEXTQA = Entry(
    "nextqa",
    toml="""name = "nextqa"
title = "NExT-QA (multiple choice, val)"
rows = "dataset/nextqa/val.csv"
video = "NExTVideo/*/{video}.mp4"
id = "{video}_{qid}"
question = "question"
options = ["a0", "a1", "a2", "a3", "a4"]
answer = "answer"
answer_format = "index"
groups = ["type"]
""",
    files={
        "dataset/nextqa/val.csv": (
            "video,frame_count,width,height,question,answer,qid,type,a0,a1,a2,a3,a4\n"
            "4010069381,369,640,480,how do the two man play the instrument,0,6,CH,roll the "
            "handle,tap their feet,strum the string,hit with sticks,pat with hand\n"
            "4010069381,369,640,480,why is the man smiling at the end,3,7,CW,he is tired,he is "
            "angry,he is cold,he finished playing,he is hungry\n"
            "7508439506,765,640,480,why did the boy put his hands on the baby,0,1,CW,play with "
            "baby,to give her food,play,support the baby,fall and pounce on the boy\n"
            "7508439506,765,640,480,where is this video taken,4,4,DL,swimming pool,outdoor,field,"
            "desert,bed room\n"
        ),
    },
    videos={"NExTVideo/0024/4010069381.mp4": 2, "NExTVideo/1150/7508439506.mp4": 2},
    # gold A, D, A, E: right on the first three
    replies={"4010069381_6": "A", "4010069381_7": "(D)", "7508439506_1": "A", "7508439506_4": "B"},
    columns={"Overall": 75.0, "CH": 100.0, "CW": 100.0, "DL": 0.0},
)

# ---------------------------------------------------------------- EgoSchema (answers apart)
EGOSCHEMA_QUESTIONS = [
    {
        "q_uid": uid,
        "google_drive_id": drive,
        "question": question,
        **{f"option {k}": option for k, option in enumerate(options)},
    }
    for uid, drive, question, options in [
        (
            "0074f737-11cb-497d-8d07-77c3a8127391",
            "1a2b3c",
            "What is the overall goal of c's actions in the video?",
            ["to cook", "to clean the room", "to paint", "to fix a bike", "to read"],
        ),
        (
            "00b9a0de-c59e-49cb-a127-6081e2fb8c8e",
            "4d5e6f",
            "How does c prepare the dough?",
            ["flattens it", "rolls it", "cuts it", "bakes it", "kneads it"],
        ),
        (
            "001934bb-81bd-4cd8-a574-0472ef3f6678",
            "7a8b9c",
            "Why does c stop scrolling?",
            ["a call", "a talk", "to type", "a drifting focus", "to drink"],
        ),
    ]
]
EGOSCHEMA = Entry(
    "egoschema",
    toml="""name = "egoschema"
title = "EgoSchema"
rows = "questions.json"
video = "videos/{q_uid}.mp4"
id = "q_uid"
question = "question"
options = ["option 0", "option 1", "option 2", "option 3", "option 4"]
answer = "answer"
answers = { file = "subset_answers.json" }
""",
    files={
        "questions.json": dumps(EGOSCHEMA_QUESTIONS),
        "subset_answers.json": dumps(
            {"0074f737-11cb-497d-8d07-77c3a8127391": 1, "00b9a0de-c59e-49cb-a127-6081e2fb8c8e": 4}
        ),
    },
    videos={f"videos/{q['q_uid']}.mp4": 2 for q in EGOSCHEMA_QUESTIONS},
    # gold B and E for the subset; the third question has no public answer (no-gold)
    replies={
        "0074f737-11cb-497d-8d07-77c3a8127391": "B",
        "00b9a0de-c59e-49cb-a127-6081e2fb8c8e": "A",
        "001934bb-81bd-4cd8-a574-0472ef3f6678": "D",
    },
    columns={"Overall": 50.0},
    no_gold=1,
)

# ---------------------------------------------------------------- Perception Test (nested)
PERCEPTION = {
    "video_10909": {
        "metadata": {"video_id": "video_10909", "split": "valid", "num_frames": 60},
        "mc_question": [
            {"id": 0, "question": "How many objects are put in the bowl?",
             "options": ["1", "2", "3"], "answer_id": 1, "area": "memory",
             "reasoning": "descriptive", "tag": ["counting", "motion"]},
            {"id": 1, "question": "Is the camera moving?", "options": ["yes", "no", "I don't know"],
             "answer_id": 1, "area": "physics", "reasoning": "descriptive",
             "tag": ["camera motion"]},
        ],
    },
    "video_7000": {
        "metadata": {"video_id": "video_7000", "split": "valid", "num_frames": 60},
        "mc_question": [
            {"id": 0, "question": "Which object is occluded at the end?",
             "options": ["the cup", "the box", "the ball"], "answer_id": 2, "area": "memory",
             "reasoning": "predictive", "tag": ["counting"]},
            {"id": 1, "question": "What will the person do next?",
             "options": ["leave", "sit", "jump"], "answer_id": 0, "area": "semantics",
             "reasoning": "predictive", "tag": ["action"]},
        ],
    },
}  # fmt: skip
PERCEPTION_TEST = Entry(
    "perception-test",
    toml="""name = "perception-test"
title = "Perception Test (multiple-choice video QA)"
rows = "mc_question_valid.json"
explode = "mc_question"
id = "{_key}_{id}"
video = "videos/{metadata.video_id}.mp4"
question = "question"
options = "options"
answer = "answer_id"
answer_format = "index"
groups = ["area", "tag"]
""",
    files={"mc_question_valid.json": dumps(PERCEPTION)},
    videos={"videos/video_10909.mp4": 2, "videos/video_7000.mp4": 2},
    # gold B, B, C, A: right on the first and the last two; a question counts once under each
    # of its tags (counting: two questions, both right)
    replies={"video_10909_0": "B", "video_10909_1": "A", "video_7000_0": "C", "video_7000_1": "A"},
    columns={
        "Overall": 75.0,
        "area: memory": 100.0,
        "area: physics": 0.0,
        "area: semantics": 100.0,
        "tag: action": 100.0,
        "tag: camera motion": 0.0,
        "tag: counting": 100.0,
        "tag: motion": 100.0,
    },
)

# ---------------------------------------------------------------- TVQA (JSON Lines, "ts")
TVQA_ROWS = [
    {"a0": "A martini glass", "a1": "Nachos", "a2": "Her purse", "a3": "Marshall's book",
     "a4": "A beer bottle", "answer_idx": 4,
     "q": "What is Robin holding in her hand when she is talking to Ted about Zoey?", "qid": 7,
     "show_name": "How I Met You Mother", "ts": "1.21-8.49",
     "vid_name": "met_s06e22_seg01_clip_02"},
    {"a0": "A tray.", "a1": "A stick.", "a2": "A coat.", "a3": "A cup.", "a4": "A paper bag.",
     "answer_idx": 3, "q": "What was Monica holding before Phoebe said here comes Monica?",
     "qid": 8, "show_name": "Friends", "ts": "17.91-22.26",
     "vid_name": "friends_s02e18_seg02_clip_18"},
    {"a0": "kiss her", "a1": "rub her shoulders", "a2": "take her to dinner",
     "a3": "pour her a drink", "a4": "take a nap with her", "answer_idx": 0,
     "q": "What did Phoebe stop David from doing when he got close to her?", "qid": 9,
     "show_name": "Friends", "ts": "0-10.01", "vid_name": "friends_s09e06_seg02_clip_13"},
]  # fmt: skip
TVQA = Entry(
    "tvqa",
    toml="""name = "tvqa"
title = "TVQA (val)"
rows = "tvqa_val.jsonl"
video = "videos/{vid_name}.mp4"
id = "qid"
question = "q"
options = ["a0", "a1", "a2", "a3", "a4"]
answer = "answer_idx"
answer_format = "index"
window = "ts"
groups = ["show_name"]
""",
    files={"tvqa_val.jsonl": jsonl(TVQA_ROWS)},
    videos={f"videos/{r['vid_name']}.mp4": 24 for r in TVQA_ROWS},
    replies={"7": "E", "8": "D", "9": "B"},  # gold E, D, A
    columns={"Overall": 200 / 3, "Friends": 50.0, "How I Met You Mother": 100.0},
)

# ---------------------------------------------------------------- ActivityNet-QA (open, joined)
ANET_QUESTIONS = [
    {"video_name": "1QIUV7WYKXg", "question": "what is the person in the video doing",
     "question_id": "v_1QIUV7WYKXg_1"},
    {"video_name": "1QIUV7WYKXg", "question": "is the person outdoors",
     "question_id": "v_1QIUV7WYKXg_2"},
    {"video_name": "9eniCub7u60", "question": "what color is the ball",
     "question_id": "v_9eniCub7u60_1"},
    {"video_name": "9eniCub7u60", "question": "how many people are there",
     "question_id": "v_9eniCub7u60_2"},
]  # fmt: skip
ANET_ANSWERS = [
    {"answer": "dancing", "type": 0, "question_id": "v_1QIUV7WYKXg_1"},
    {"answer": "yes", "type": 3, "question_id": "v_1QIUV7WYKXg_2"},
    {"answer": "red", "type": 4, "question_id": "v_9eniCub7u60_1"},
    {"answer": "2", "type": 7, "question_id": "v_9eniCub7u60_2"},
]
ACTIVITYNET_QA = Entry(
    "activitynet-qa",
    toml="""name = "activitynet-qa"
title = "ActivityNet-QA (test)"
kind = "open-ended"
rows = "test_q.json"
video = "videos/v_{video_name}.mp4"
id = "question_id"
question = "question"
answer = "answer"
answers = { file = "test_a.json", key = "question_id" }
scoring = "exact"
groups = ["type"]
""",
    files={"test_q.json": dumps(ANET_QUESTIONS), "test_a.json": dumps(ANET_ANSWERS)},
    videos={"videos/v_1QIUV7WYKXg.mp4": 2, "videos/v_9eniCub7u60.mp4": 2},
    replies={
        "v_1QIUV7WYKXg_1": "Dancing.",
        "v_1QIUV7WYKXg_2": "no",
        "v_9eniCub7u60_1": "red",
        "v_9eniCub7u60_2": "three",
    },
    columns={"Overall": 50.0, "0": 100.0, "3": 0.0, "4": 100.0, "7": 0.0},
)

# ---------------------------------------------------------------- MSRVTT-QA (open, one list)
MSRVTT_ROWS = [
    {"answer": "man", "id": 0, "question": "who is talking on stage", "video_id": 7010},
    {"answer": "guitar", "id": 1, "question": "what is a man playing", "video_id": 7010},
    {"answer": "car", "id": 2, "question": "what is driving down the road", "video_id": 7011},
    {"answer": "cooking", "id": 3, "question": "what is a woman doing", "video_id": 7011},
]
MSRVTT_QA = Entry(
    "msrvtt-qa",
    toml="""name = "msrvtt-qa"
title = "MSRVTT-QA (test)"
kind = "open-ended"
rows = "test_qa.json"
video = "video/video{video_id}.mp4"
id = "id"
question = "question"
answer = "answer"
scoring = "exact"
""",
    files={"test_qa.json": dumps(MSRVTT_ROWS)},
    videos={"video/video7010.mp4": 2, "video/video7011.mp4": 2},
    replies={"0": "Man", "1": "a guitar", "2": "car", "3": "cooking"},
    columns={"Overall": 75.0},  # "a guitar" is not exactly "guitar"
)

# ---------------------------------------------------------------- STAR (options as records)
STAR_ROWS = [
    {"question_id": "Interaction_T1_13", "question": "Which object was taken by the person?",
     "video_id": "6H78U", "start": 11.1, "end": 19.6, "answer": "The clothes.",
     "question_program": [{"function": "Situations", "value_input": []}],
     "choices": [
         {"choice_id": 0, "choice": "The bag.", "choice_program": []},
         {"choice_id": 1, "choice": "The clothes.", "choice_program": []},
         {"choice_id": 2, "choice": "The towel.", "choice_program": []},
         {"choice_id": 3, "choice": "The blanket.", "choice_program": []},
     ],
     "situations": {}},
    {"question_id": "Sequence_T1_31", "question": "What happened after the person opened the door?",
     "video_id": "6H78U", "start": 2.5, "end": 9.8, "answer": "Took the box.",
     "question_program": [{"function": "Situations", "value_input": []}],
     "choices": [
         {"choice_id": 0, "choice": "Sat on the bed.", "choice_program": []},
         {"choice_id": 1, "choice": "Closed the window.", "choice_program": []},
         {"choice_id": 2, "choice": "Took the box.", "choice_program": []},
         {"choice_id": 3, "choice": "Put down the cup.", "choice_program": []},
     ],
     "situations": {}},
]  # fmt: skip
STAR = Entry(
    "star",
    toml="""name = "star"
title = "STAR (val)"
rows = "STAR_val.json"
video = "Charades_v1_480/{video_id}.mp4"
id = "question_id"
question = "question"
options = "choices[].choice"
answer = "answer"
answer_format = "text"
start = "start"
end = "end"
""",
    files={"STAR_val.json": dumps(STAR_ROWS)},
    videos={"Charades_v1_480/6H78U.mp4": 24},
    replies={"Interaction_T1_13": "B", "Sequence_T1_31": "D"},  # gold B, C
    columns={"Overall": 50.0},
)

# ---------------------------------------------------------------- Video-MME, MVBench
VIDEO_MME = Entry(
    "video-mme",
    toml=VIDEOMME_TOML,
    files={},
    rows={"videomme/test-00000-of-00001.parquet": VIDEOMME_ROWS},
    videos={f"data/{r['videoID']}.mp4": 2 for r in VIDEOMME_ROWS},
    # gold A, B, C, D, A, B; the third reply is unreadable and left out (unparsed = "drop")
    replies={
        "001-1": "A",
        "001-2": "B",
        "001-3": "no idea",
        "002-1": "D",
        "002-2": "C",
        "002-3": "B",
    },
    columns={
        "Overall": 80.0,
        "duration: medium": 200 / 3,
        "duration: short": 100.0,
        "domain: Knowledge": 100.0,
        "domain: Sports Competition": 200 / 3,
        "task_type: Attribute Perception": 75.0,
        "task_type: Counting Problem": 100.0,
    },
)
MVBENCH_ENTRY = Entry(
    "mvbench",
    toml=MVBENCH_TOML,
    files={f"json/{task}.json": dumps(rows) for task, rows in MVBENCH.items()},
    videos={
        f"video/{MVBENCH_FOLDERS[task]}/{row['video']}": 2
        for task, rows in MVBENCH.items()
        for row in rows
    },
    # gold C, A (action sequence) and B (action count, the candidate "2")
    replies={
        "action_sequence-1": "(C) Put down the cup/glass/bottle.",
        "action_sequence-2": "B",
        "action_count-1": "B",
    },
    columns={"Overall": 200 / 3, "Action Count": 100.0, "Action Sequence": 50.0},
)

GALLERY = [NEXTQA, EGOSCHEMA, PERCEPTION_TEST, TVQA, ACTIVITYNET_QA, MSRVTT_QA, STAR, VIDEO_MME,
           MVBENCH_ENTRY]  # fmt: skip


def write_entry(entry: Entry, root: Path) -> Path:
    """The entry's folder: its files, its videos (long enough for its windows), benchmark.toml."""
    folder = root / entry.name
    for name, text in entry.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    for name, rows in entry.rows.items():
        write_rows(folder / name, rows)
    for n, (name, seconds) in enumerate(entry.videos.items()):
        write_clip(folder / name, 40 + 30 * n, frames=int(24 * seconds) + 1)
    (folder / "benchmark.toml").write_text(entry.toml, encoding="utf-8")
    return folder


def replies_file(entry: Entry, path: Path) -> Path:
    path.write_text(jsonl([{"id": k, "answer": v} for k, v in entry.replies.items()]))
    return path
