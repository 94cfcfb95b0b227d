"""Building 4D-Bench (4D-Bench paper, section 3.2 and supplement B.1-B.2): render animated 3D
assets to multi-view videos with Blender, trim them to their motion, filter them by visual
quality, and count what each stage kept (`vidbench curate 4d render|motion|quality|funnel`)."""
