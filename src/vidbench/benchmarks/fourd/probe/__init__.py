"""The 4D probe suite: procedural 4D objects rendered by Blender with exact answers, each question
kept only when Blender shows its evidence in the model's input, and difficulty knobs recorded per
question (`vidbench synth 4d --renderer blender`; docs/probe-suite.md)."""
