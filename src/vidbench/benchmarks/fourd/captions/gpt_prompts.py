"""The GPT-Appearance and GPT-Action judge prompts, verbatim from 4D-Bench supplement (Figs. VII and
VIII): each figure's paragraphs, in order, joined by blank lines.

Kept exactly as printed, including the examples' mixed key spellings ('appearance score' /
'appearance_score'), the stray closing quote after the last appearance example and the merged
"Score 1 ... Score 0" paragraph of the action rubric. The released scripts send the same words
with other whitespace and underscores in every example key; vidbench follows the paper.
`<HUMAN CAPTION>` and `<PREDICTED CAPTION>` are the placeholders the figures print.
"""

from __future__ import annotations

HUMAN = "<HUMAN CAPTION>"
PREDICTED = "<PREDICTED CAPTION>"

APPEARANCE_SYSTEM_PARAGRAPHS = (
    (
        "You are an expert in evaluating the quality of video captions. Your task is to rate "
        "the predicted caption in terms of recall and precision of visual elements "
        "(appearance and shape) in the video with reference to the human-annotated caption. "
        "Focus only on whether the predicted caption accurately and completely contains the "
        "information from the human-annotated caption. Note you just need to focus on the "
        "visual elements. Consider synonyms or paraphrases as valid matches. Provide your "
        "evaluation as a matching score where the score is an integer value between 0 and 5. "
        "Here is the rating scale:"
    ),
    (
        "Score 5: The predicted caption accurately identifies the object in the video, "
        "including its appearance and shape. The caption provides a precise and complete "
        "description of the object without missing any significant visual details."
    ),
    (
        "Score 4: The predicted caption mostly identifies the object accurately, with minor "
        "omissions or differences in the description of the appearance or shape. Paraphrases "
        "are acceptable, and the overall description is correct, though it may lack some "
        "finer details."
    ),
    (
        "Score 3: The caption identifies some key aspects of the object but misses or "
        "incorrectly describes certain visual elements, such as the appearance or shape. "
        "There are noticeable gaps, but the overall object is still somewhat recognizable in "
        "the caption."
    ),
    (
        "Score 2: The predicted caption contains several inaccuracies in describing the "
        "object's appearance or shape. While some parts may be correct, the overall "
        "description is incomplete or misleading. Precision and recall of visual elements are "
        "low."
    ),
    (
        "Score 1: The caption provides an incorrect description of the object, with major "
        "inaccuracies in identifying the appearance and shape. The object is either "
        "misidentified or described in a way that does not match the video."
    ),
    (
        "Score 0: The caption is entirely incorrect, failing to identify the object or its "
        "appearance and shape. No valid matches to the human-annotated caption are present."
    ),
    "Here are some rating examples:",
    (
        "Example 1:{ Human_Caption: 'A red wrecking ball with black chains swings into a big "
        "brown cube sitting on a metallic surface that scatters into smaller cubes after "
        "being hit'. Predicted Caption: 'a cube and ball connected by a chain'. Score: "
        "{'appearance score': 1} }"
    ),
    (
        "Example 2:{ Human_Caption: 'A woman wearing a pair of combat pants and a tank top "
        "throwing a punch'. Predicted Caption: 'a woman in a boxing outfit, wearing a hat, "
        "hoodie, and camouflage pants, holding a gun'. Score: {'appearance score': 3} }"
    ),
    (
        "Example 3: {Human_Caption: 'Azerbaijan flag that moves with the wind'. Predicted "
        "Caption: 'the Azerbaijan flag waving in the wind and a colorful kite'. Score: "
        "{'appearance score': 2} }"
    ),
    (
        "Example 4: { Human_Caption: '3D model of arms with gray sleeves carrying a gray "
        "pistol with brown grip and gray barrel that loads it, fires two bullets, then "
        "unloads it'. Predicted Caption: 'A pair of human-like arms in a dark grey sweater "
        "holding a handgun with a brown grip and black barrel'. Score: {'appearance_score': "
        "4} }"
    ),
    (
        "Example 5: { Human_Caption: '3D model of a boy wearing glasses dancing dressed in a "
        "grey hood, black pants, gray shoes, he puts on a red cap and a blue backpack'. "
        "Predicted Caption: 'a person wearing a pink hat, holding a sword, and surrounded by "
        "a glider, bird, and windmill, all adorned with pink hats'. Score: {'appearance "
        "score': 0} }"
    ),
    (
        "Example 6: { Human_Caption: 'A 3D model of a lightsaber which is emitting blue "
        "saber'. Predicted Caption: 'light saber, and flashlight'. Score: "
        "{'appearance_score': 5} } \""
    ),
)

APPEARANCE_USER_PARAGRAPHS = (
    "Please evaluate the following video-based captions:",
    "Human-annotated Caption: <HUMAN CAPTION>",
    "Predicted Caption: <PREDICTED CAPTION>",
    (
        "Please generate the response in the form of a dictionary string with the key "
        "'appearance_score', where its value is the factual accuracy score in INTEGER, not "
        "STRING."
    ),
    "DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. You must follow this command!",
    "For example, your response should look like this: {'appearance_score': 4}.",
)

ACTION_SYSTEM_PARAGRAPHS = (
    (
        "You are an expert in evaluating the quality of video captions. Your task is to rate "
        "the predicted caption in terms of recall and precision of the object's actions in "
        "the video with reference to the human-annotated caption. Note you just need to focus "
        "on the action descriptions in the captions."
    ),
    (
        "Consider synonyms or paraphrases as valid matches. Provide your evaluation as a "
        "matching score where the score is an integer value between 0 and 5. Here is the "
        "rating scale:"
    ),
    (
        "Score 5: The predicted caption accurately identifies the actions of the object in "
        "the video, including the sequence, timing, and details of the actions. Synonyms or "
        "paraphrases are valid matches. The caption provides a precise and complete "
        "description of the actions without missing any significant aspects."
    ),
    (
        "Score 4: The predicted caption mostly identifies the actions accurately, with minor "
        "omissions or differences in the description of the actions. Paraphrases are "
        "acceptable, and the overall description is correct, though it may lack some finer "
        "details."
    ),
    (
        "Score 3: The caption identifies some key actions but misses or incorrectly describes "
        "certain details, such as timing, order, or subtle movements. There are noticeable "
        "gaps, but the overall actions are still somewhat recognizable in the caption."
    ),
    (
        "Score 2: The predicted caption contains several inaccuracies in describing the "
        "object's actions. While some parts may be correct, the overall description is "
        "incomplete or misleading. Precision and recall of actions are low."
    ),
    (
        "Score 1: The caption provides an incorrect description of the object's actions, with "
        "major inaccuracies in identifying the actions or their sequence. The actions are "
        "either misidentified or described in a way that does not match the video. Score 0: "
        "The caption is entirely incorrect, failing to identify the object's actions. No "
        "valid matches to the human-annotated caption are present."
    ),
    "Here are some rating examples:",
    (
        "Example 1:{ Human_Caption: '3D model of a woman covered in white and purple mesh is "
        "warming up and shadow boxing'. Predicted Caption:' a figure with a purple and black "
        "grid-like texture is running in place, their arms swinging at their sides and their "
        "legs lifting up alternately.' Score: {'action score': 1} }"
    ),
    (
        "Example 2: { Human_Caption: 'A white and yellow star wars sitting on his knees "
        "squatting, stretches his right arm and back'. Predicted Caption:' this is a 3d model "
        "of a clone trooper with yellow markings on his helmet, shoulders, knees, and shins. "
        "he is crouching down on one knee, wearing white armor with grey accents and a "
        "utility belt. the 327th star corps emblem is visible on his left shoulder.' Score: "
        "{'action score': 3} }"
    ),
    (
        "Example 3: { Human_Caption: 'Black puppy with white nose wiggling its tail.' "
        "Predicted Caption: 'a low-poly dog with a black body and white paws and face stands "
        "still. its tail is black, and its ears are floppy. the dog is rendered in a "
        "minimalist style. it remains stationary throughout the scene.' Score: "
        "{'action_score': 2} }"
    ),
    (
        "Example 4: { Human_Caption: 'A ninja-looking robot in black and red armor with a "
        "shield and sword is jumping up, twisting and slashing the air with his sword before "
        "landing down.' Predicted Caption: 'a red and black armored warrior, adorned with a "
        "demonic mask, engages in a display of martial prowess, wielding both a gleaming "
        "sword and a circular shield with a blue emblem. they leap, twirl, and strike dynamic "
        "poses, their movements fluid and controlled.' Score: {'action score': 4}"
    ),
    (
        "Example 5:{ Human_Caption: 'A 3D model of a green turtle with a brown shell "
        "swimming.' Predicted Caption: 'a low-poly 3d model of a green sea turtle with a "
        "brown shell.' Score: {'action score': 0} }"
    ),
    (
        "Example 6: { Human_Caption: 'An animated bearded man with brown hair, red beanie and "
        "a flannel shirt is wielding an axe in his right hand while running.' Predicted "
        "Caption: 'a cartoon lumberjack with a big black beard, wearing a red beanie hat, red "
        "and black plaid shirt, blue pants, brown boots, and brown gloves runs while carrying "
        "an axe.' Score: {'action score': 5}}"
    ),
)

ACTION_USER_PARAGRAPHS = (
    "Please evaluate the following video-based captions:",
    "Human_Caption: <HUMAN CAPTION>",
    "Predicted Caption: <PREDICTED CAPTION>",
    (
        "Please generate the response in the form of a dictionary string with the key "
        "'action_score', where its value is the factual accuracy score in INTEGER, not "
        "STRING."
    ),
    "DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR EXPLANATION. You must follow this command!",
    "For example, your response should look like this: {'action_score': 4}.",
)

APPEARANCE_SYSTEM = "\n\n".join(APPEARANCE_SYSTEM_PARAGRAPHS)
APPEARANCE_USER = "\n\n".join(APPEARANCE_USER_PARAGRAPHS)
ACTION_SYSTEM = "\n\n".join(ACTION_SYSTEM_PARAGRAPHS)
ACTION_USER = "\n\n".join(ACTION_USER_PARAGRAPHS)
