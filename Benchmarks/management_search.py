"""The management API on 1,000,000 asset rows (issue 38): five Search expressions (with
total_count and the format aggregation), a 500-asset page of `resources` and of
`resources_by_tag`, and a prefix of 10,000 assets paged through, driven by the pinned
`cloudinary` SDK against `derive serve` on PostgreSQL. Prints p50/p95 in milliseconds.

Seed a migrated database (`derive migrate --database URL`), then start serve on it:

    psql URL -c "INSERT INTO derive.served_assets (cloud, public_id, version, format, bytes, width, height, tags, context,
                 original_key, original_sha256, created_at)
      SELECT 'testcloud', 'f' || (i % 100) || '/img' || i, 1700000000, (ARRAY['jpg','png','webp','avif'])[1 + (i % 4)::int],
             1000 + (i * 7919) % 5000000, 100 + i % 4000, 100 + (i * 31) % 3000,
             CASE WHEN i % 10 = 0 THEN '[\"sale\",\"red\"]'::jsonb WHEN i % 3 = 0 THEN '[\"red\"]'::jsonb ELSE '[]'::jsonb END,
             CASE WHEN i % 7 = 0 THEN jsonb_build_object('kind', 'k' || (i % 5)) ELSE '{}'::jsonb END,
             'originals/x' || i, md5(i::text) || md5(i::text), now() - (i || ' seconds')::interval
      FROM generate_series(1::bigint, 1000000::bigint) i" -c "ANALYZE derive.served_assets"
    DERIVE_CLOUD_NAME=testcloud DERIVE_API_KEY=123456789012345 DERIVE_API_SECRET=a-test-secret-0123456789 \
        derive serve --port 8090 --database URL --store /tmp/store &
    python3 Benchmarks/management_search.py 8090
"""
import json, sys, time, resource
import cloudinary, cloudinary.api
from cloudinary.search import Search
port = sys.argv[1]
cloudinary.config(cloud_name="testcloud", api_key="123456789012345", api_secret="a-test-secret-0123456789", secure=False,
                  upload_prefix="http://127.0.0.1:%s" % port)
def timed(call, n):
    times = []
    for _ in range(n):
        t = time.perf_counter(); r = call(); times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {"p50": round(times[len(times)//2], 1), "p95": round(times[int(len(times)*0.95) - 1 if n >= 20 else -1], 1), "result": r}
out = {}
exprs = {"tag": "tags=sale AND format:jpg", "folder": "folder:f7 AND width>2000", "prefix": "public_id:f42/img1*",
         "recent": "created_at>1d AND bytes<100kb", "context": "context.kind:k3 AND NOT tags:red"}
for name, e in exprs.items():
    r = timed(lambda: Search().expression(e).max_results(50).aggregate("format").execute(), 20)
    r["result"] = {"total_count": r["result"].get("total_count"), "n": len(r["result"]["resources"])}
    out["search_" + name] = r
r = timed(lambda: cloudinary.api.resources(max_results=500), 10); r["result"] = len(r["result"]["resources"]); out["resources_page"] = r
r = timed(lambda: cloudinary.api.resources_by_tag("sale", max_results=500), 10); r["result"] = len(r["result"]["resources"]); out["by_tag_page"] = r
# Page through a prefix of 10,000 assets.
t = time.perf_counter(); n = 0; cursor = None; pages = 0
while True:
    kw = {"type": "upload", "prefix": "f1/", "max_results": 500}
    if cursor: kw["next_cursor"] = cursor
    r = cloudinary.api.resources(**kw); n += len(r["resources"]); pages += 1; cursor = r.get("next_cursor")
    if not cursor: break
out["prefix_walk"] = {"assets": n, "pages": pages, "ms": round((time.perf_counter() - t) * 1000)}
print(json.dumps(out, indent=1))
