"""How video/*.mp4 were made from the AutoEval-Video clips (NOTICE): re-encoded smaller with PyAV,
keeping every frame, its timestamp and the keyframe positions, so frame counts, times and seeking
behave as on the original clips.

    python tests/data/autoeval-video/make_small.py SRC_DIR/video tests/data/autoeval-video/video \
        6 19 32 51 114 246 278 301
"""

from __future__ import annotations

import argparse
from pathlib import Path

import av
from av.video.frame import PictureType


def shrink(src: Path, dst: Path, long_side: int = 480, crf: int = 30) -> None:
    with av.open(str(src)) as source, av.open(str(dst), "w") as out:
        video = source.streams.video[0]
        scale = long_side / max(video.width, video.height)
        width, height = (round(video.width * scale / 2) * 2, round(video.height * scale / 2) * 2)
        stream = out.add_stream("libx264", rate=video.average_rate)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = stream.codec_context.time_base = video.time_base
        # keyframes only where the source has them (forced below), none added by the encoder
        stream.options = {"crf": str(crf), "preset": "slow", "g": "100000", "sc_threshold": "0"}
        for frame in source.decode(video):
            small = frame.reformat(width, height, "yuv420p", interpolation="AREA")
            small.pts, small.time_base = frame.pts, frame.time_base
            small.pict_type = PictureType.I if frame.key_frame else PictureType.NONE
            out.mux(stream.encode(small))
        out.mux(stream.encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="the dataset's video/ folder")
    parser.add_argument("dst", type=Path, help="where the small clips go")
    parser.add_argument("ids", nargs="+", help="instance IDs")
    args = parser.parse_args()
    args.dst.mkdir(parents=True, exist_ok=True)
    for clip_id in args.ids:
        shrink(args.src / f"{clip_id}.mp4", args.dst / f"{clip_id}.mp4")


if __name__ == "__main__":
    main()
