-- 0005: the faces found in each asset.
--
-- {"count": 2, "detector": "dlib-hog", "boxes": [{"x": 181, "y": 140, "width": 187, "height": 186, "score": 1.05}, ...]}
-- in upright source pixels, best first. NULL until a job that needed faces (a face or auto
-- gravity, a face effect) has looked; a later job that did not look keeps what an earlier one found.
ALTER TABLE derive.assets ADD COLUMN faces jsonb;
