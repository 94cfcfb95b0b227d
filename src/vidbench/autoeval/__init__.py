"""AutoEval-Video workflows around the rules judge.

judge_predictions: `vidbench judge autoeval-video`, judging a predictions file made elsewhere.
agreement:         `vidbench judge-agreement`, the judge against human verdicts (Table 3).
redteam:           `vidbench rules ...`, adversarial rule annotation (papers/004 section 3.4).
"""
