"""Drives the management half of `derive serve` with the real Cloudinary Python SDK (PyPI
`cloudinary`, pinned in Scripts/test.sh): the Admin API (`cloudinary.api`), the Search API
(`cloudinary.Search`) and the Upload API's tags and context calls (`cloudinary.uploader`).
Prints one JSON object of what each step saw; ManagementTests asserts it.

    python3 cloudinary_admin.py PORT CLOUD KEY SECRET JPEG PNG STORE
"""
import json
import os
import sys
import urllib.error
import urllib.request

import cloudinary
import cloudinary.api
import cloudinary.uploader
import cloudinary.utils
from cloudinary.search import Search

port, cloud, key, secret, jpeg, png, store = sys.argv[1:8]
host = "127.0.0.1:%s" % port


def configure(api_secret=secret):
    cloudinary.reset_config()
    cloudinary.config(cloud_name=cloud, api_key=key, api_secret=api_secret, secure=False, cname=host,
                      upload_prefix="http://" + host)


def attempt(call):
    try:
        result = call()
        answer = {"ok": dict(result)}
        if hasattr(result, "rate_limit_allowed"):
            answer["rate"] = {"allowed": result.rate_limit_allowed, "remaining": result.rate_limit_remaining,
                              "reset": list(result.rate_limit_reset_at) if result.rate_limit_reset_at else None}
        return answer
    except Exception as error:  # the SDK raises its own classes per HTTP status
        return {"error": type(error).__name__, "message": str(error)}


def ids(answer):
    return [item["public_id"] for item in answer.get("ok", {}).get("resources", [])]


configure()
out = {"sdk": cloudinary.VERSION}

# Four assets: two JPEGs and a PNG in mgmt/, one JPEG elsewhere.
uploads = [("mgmt/a", jpeg, "red,sale", {"alt": "A", "kind": "photo"}), ("mgmt/b", jpeg, "red", {"kind": "drawing"}),
           ("mgmt/c", png, "", None), ("other/d", jpeg, "", None)]
for public_id, path, tags, context in uploads:
    options = {"public_id": public_id, "overwrite": True}
    if tags:
        options["tags"] = tags
    if context:
        options["context"] = context
    out.setdefault("uploads", []).append(attempt(lambda: cloudinary.uploader.upload(path, **options)))

out["ping"] = attempt(cloudinary.api.ping)
out["config"] = attempt(lambda: cloudinary.api.config(settings=True))
out["resource_types"] = attempt(cloudinary.api.resource_types)

# Paging: two at a time, newest first, until there is no next_cursor.
pages, cursor = [], None
for _ in range(5):
    options = {"max_results": 2}
    if cursor:
        options["next_cursor"] = cursor
    page = attempt(lambda: cloudinary.api.resources(**options))
    pages.append(ids(page))
    cursor = page.get("ok", {}).get("next_cursor")
    if not cursor:
        break
out["pages"] = pages
out["ascending"] = ids(attempt(lambda: cloudinary.api.resources(direction="asc", max_results=10)))
out["prefix"] = attempt(lambda: cloudinary.api.resources(type="upload", prefix="mgmt/", tags=True, context=True))
out["by_ids"] = ids(attempt(lambda: cloudinary.api.resources_by_ids(["other/d", "mgmt/a", "missing"])))
out["start_at_future"] = attempt(lambda: cloudinary.api.resources(start_at="2999-01-01 00:00:00"))
out["start_at_past"] = ids(attempt(lambda: cloudinary.api.resources(start_at="2001-01-01 00:00:00", max_results=10)))
out["start_at_bad"] = attempt(lambda: cloudinary.api.resources(start_at="yesterday"))
out["by_tag"] = ids(attempt(lambda: cloudinary.api.resources_by_tag("red")))
out["by_context_key"] = ids(attempt(lambda: cloudinary.api.resources_by_context("kind")))
out["by_context_value"] = ids(attempt(lambda: cloudinary.api.resources_by_context("kind", "photo")))
out["bad_cursor"] = attempt(lambda: cloudinary.api.resources(next_cursor="not-a-cursor-of-derive"))
out["bad_max"] = attempt(lambda: cloudinary.api.resources(max_results=501))

out["update"] = attempt(lambda: cloudinary.api.update("mgmt/b", tags=["blue", "green"], context={"alt": "B", "kind": ""}))
out["update_missing"] = attempt(lambda: cloudinary.api.update("nope", tags=["x"]))
out["resource_b"] = attempt(lambda: cloudinary.api.resource("mgmt/b"))

out["tags"] = attempt(cloudinary.api.tags)
out["tags_prefix"] = attempt(lambda: cloudinary.api.tags(prefix="s"))
first = attempt(lambda: cloudinary.api.tags(max_results=1))
out["tags_first"] = first
out["tags_second"] = attempt(lambda: cloudinary.api.tags(max_results=1, next_cursor=first.get("ok", {}).get("next_cursor")))

# Search.
out["search"] = attempt(lambda: Search().expression("tags=red AND format:jpg").with_field("tags").with_field("context")
                        .aggregate("format").execute())
out["search_folder"] = attempt(lambda: Search().expression("folder:mgmt").sort_by("public_id", "asc").aggregate("format").execute())
search_pages, cursor = [], None
for _ in range(5):
    query = Search().expression("public_id:mgmt/*").sort_by("public_id", "desc").max_results(1)
    if cursor:
        query = query.next_cursor(cursor)
    page = attempt(query.execute)
    search_pages.append(ids(page))
    cursor = page.get("ok", {}).get("next_cursor")
    if not cursor:
        break
out["search_pages"] = search_pages
out["search_bytes"] = ids(attempt(lambda: Search().expression("bytes>1kb AND NOT public_id:other*").max_results(10).execute()))
out["search_bad"] = attempt(lambda: Search().expression("tags=(red").execute())
out["search_bad_field"] = attempt(lambda: Search().expression("colour:red").execute())

# The Upload API's tags and context calls, each read back.
def tags_of(public_id):
    return attempt(lambda: cloudinary.api.resource(public_id)).get("ok", {}).get("tags")


def context_of(public_id):
    return attempt(lambda: cloudinary.api.resource(public_id)).get("ok", {}).get("context", {}).get("custom", {})


out["add_tag"] = attempt(lambda: cloudinary.uploader.add_tag("new", ["mgmt/a", "mgmt/c", "missing"]))
out["after_add_tag"] = [tags_of("mgmt/a"), tags_of("mgmt/c")]
out["remove_tag"] = attempt(lambda: cloudinary.uploader.remove_tag("red", ["mgmt/a"]))
out["after_remove_tag"] = tags_of("mgmt/a")
out["replace_tag"] = attempt(lambda: cloudinary.uploader.replace_tag("only", ["other/d"]))
out["after_replace_tag"] = tags_of("other/d")
out["remove_all_tags"] = attempt(lambda: cloudinary.uploader.remove_all_tags(["mgmt/b"]))
out["after_remove_all_tags"] = tags_of("mgmt/b")
out["add_context"] = attempt(lambda: cloudinary.uploader.add_context({"caption": "x=y|z", "kind": "still"}, ["mgmt/a"]))
out["after_add_context"] = context_of("mgmt/a")
out["remove_all_context"] = attempt(lambda: cloudinary.uploader.remove_all_context(["mgmt/a"]))
out["after_remove_all_context"] = context_of("mgmt/a")
out["tags_after"] = attempt(cloudinary.api.tags)

# Wrong credentials: refused on every family.
configure(api_secret="not-the-secret")
out["wrong_admin"] = attempt(cloudinary.api.ping)
out["wrong_search"] = attempt(lambda: Search().expression("").execute())
out["wrong_tags"] = attempt(lambda: cloudinary.uploader.add_tag("evil", ["mgmt/a"]))
out["wrong_destroy"] = attempt(lambda: cloudinary.uploader.destroy("mgmt/a"))
out["wrong_delete"] = attempt(lambda: cloudinary.api.delete_resources(["mgmt/a"]))
configure()
out["after_wrong"] = tags_of("mgmt/a")


def status(url):
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def original(public_id, format="jpg"):
    return cloudinary.utils.cloudinary_url(public_id, format=format)[0]


def objects():
    """The folder store's objects (its keys), as `derive serve` left them."""
    found = []
    for root, _, files in os.walk(store):
        found += [os.path.relpath(os.path.join(root, name), store) for name in files if not name.startswith(".")]
    return sorted(found)


def derived_of(public_id):
    return [item["transformation"] for item in attempt(lambda: cloudinary.api.resource(public_id)).get("ok", {}).get("derived", [])]


# Deleting. mgmt/a, mgmt/b, other/d and del/e share one original (the same bytes); mgmt/c's PNG
# is its own; del/e has three eager derivatives. Each deletion frees the objects nothing else names.
eager = attempt(lambda: cloudinary.uploader.upload(jpeg, public_id="del/e", eager=[{"width": w, "crop": "scale"} for w in (20, 30, 40)]))
derived_url = eager.get("ok", {}).get("eager", [{}])[0].get("url")
out["before_delete"] = {"derived": status(derived_url) if derived_url else None, "original": status(original("del/e"))}
out["objects_before"] = objects()
out["destroy"] = attempt(lambda: cloudinary.uploader.destroy("mgmt/c"))
out["destroy_again"] = attempt(lambda: cloudinary.uploader.destroy("mgmt/c"))
out["after_destroy"] = {"resource": attempt(lambda: cloudinary.api.resource("mgmt/c")).get("error"), "original": status(original("mgmt/c", "png"))}
out["objects_after_destroy"] = objects()
resource_e = attempt(lambda: cloudinary.api.resource("del/e")).get("ok", {})
w30 = [item["id"] for item in resource_e.get("derived", []) if item["transformation"].startswith("c_scale,w_30")]
out["delete_derived"] = attempt(lambda: cloudinary.api.delete_derived_resources(w30 + ["0" * 40]))
out["after_delete_derived"] = derived_of("del/e")
out["objects_after_delete_derived"] = objects()
out["delete_by_transformation"] = attempt(lambda: cloudinary.api.delete_derived_by_transformation("del/e", [{"width": 40, "crop": "scale"}]))
out["after_delete_by_transformation"] = derived_of("del/e")
out["objects_after_delete_by_transformation"] = objects()
out["keep_original"] = attempt(lambda: cloudinary.api.delete_resources(["del/e"], keep_original=True))
out["after_keep_original"] = {"derived": status(derived_url) if derived_url else None, "original": status(original("del/e")),
                              "listed": derived_of("del/e")}
out["objects_after_keep_original"] = objects()
out["delete_resources"] = attempt(lambda: cloudinary.api.delete_resources(["del/e", "nope"]))
out["after_delete_resources"] = {"derived": status(derived_url) if derived_url else None, "original": status(original("del/e"))}
out["delete_by_prefix"] = attempt(lambda: cloudinary.api.delete_resources_by_prefix("other/"))
out["delete_by_tag"] = attempt(lambda: cloudinary.api.delete_resources_by_tag("new"))
out["shared_original"] = {"deleted_a": status(original("mgmt/a")), "kept_b": status(original("mgmt/b"))}
out["left"] = ids(attempt(lambda: cloudinary.api.resources(max_results=10)))
out["search_left"] = attempt(lambda: Search().expression("").aggregate("format").execute()).get("ok", {}).get("total_count")
out["reupload"] = attempt(lambda: cloudinary.uploader.upload(png, public_id="mgmt/a")).get("ok", {}).get("format")
out["after_reupload"] = status(original("mgmt/a", "png"))
out["objects_after"] = objects()

# Renaming: the row, its derivatives and their URLs move; the objects stay; an existing target
# needs overwrite, which deletes it (and frees what only it named).
ren = attempt(lambda: cloudinary.uploader.upload(jpeg, public_id="ren/r", eager=[{"width": 25, "crop": "scale"}]))
ren_derived = ren.get("ok", {}).get("eager", [{}])[0].get("url") or ""
attempt(lambda: cloudinary.uploader.upload(png, public_id="ren/t", eager=[{"width": 26, "crop": "scale"}]))
out["before_rename"] = {"derived": status(ren_derived), "objects": objects()}
out["rename"] = attempt(lambda: cloudinary.uploader.rename("ren/r", "ren/s"))
out["after_rename"] = {"old": status(original("ren/r")), "new": status(original("ren/s")), "old_derived": status(ren_derived),
                       "derived": status(ren_derived.replace("/ren/r.", "/ren/s.")), "listed": derived_of("ren/s"),
                       "resource_old": attempt(lambda: cloudinary.api.resource("ren/r")).get("error")}
out["rename_exists"] = attempt(lambda: cloudinary.uploader.rename("ren/s", "ren/t"))
out["rename_missing"] = attempt(lambda: cloudinary.uploader.rename("nope", "ren/x"))
out["rename_to_type"] = attempt(lambda: cloudinary.uploader.rename("ren/s", "ren/u", to_type="private"))
out["rename_overwrite"] = attempt(lambda: cloudinary.uploader.rename("ren/s", "ren/t", overwrite=True, invalidate=True))
out["after_overwrite"] = {"t": status(original("ren/t")), "s": status(original("ren/s")), "listed": derived_of("ren/t")}
out["objects_after_rename"] = objects()

# Folders (the prefixes of public ids) and usage (from the database).
attempt(lambda: cloudinary.uploader.upload(png, public_id="ren/sub/x"))
out["root_folders"] = attempt(cloudinary.api.root_folders)
first_folder = attempt(lambda: cloudinary.api.root_folders(max_results=1))
out["root_folders_paged"] = [first_folder, attempt(lambda: cloudinary.api.root_folders(max_results=1,
                                                                                      next_cursor=first_folder.get("ok", {}).get("next_cursor")))]
out["subfolders"] = attempt(lambda: cloudinary.api.subfolders("ren"))
out["subfolders_missing"] = attempt(lambda: cloudinary.api.subfolders("nope"))
out["create_folder"] = attempt(lambda: cloudinary.api.create_folder("new/empty"))
out["delete_folder_full"] = attempt(lambda: cloudinary.api.delete_folder("ren"))
out["delete_folder_missing"] = attempt(lambda: cloudinary.api.delete_folder("nope"))
out["usage"] = attempt(cloudinary.api.usage)

# explicit: eager outputs of an asset already uploaded, waited for or not; tags replaced, context set.
out["explicit"] = attempt(lambda: cloudinary.uploader.explicit("mgmt/b", type="upload", eager=[{"width": 15, "crop": "scale"}],
                                                               tags=["ex"], context={"k": "v"}))
explicit_url = out["explicit"].get("ok", {}).get("eager", [{}])[0].get("url") or ""
out["after_explicit"] = {"derived": derived_of("mgmt/b"), "tags": tags_of("mgmt/b"), "context": context_of("mgmt/b"), "url": status(explicit_url)}
out["explicit_async"] = attempt(lambda: cloudinary.uploader.explicit("mgmt/b", type="upload", eager=[{"width": 16, "crop": "scale"}], eager_async=True))
out["explicit_missing"] = attempt(lambda: cloudinary.uploader.explicit("nope", type="upload"))
out["explicit_bad"] = attempt(lambda: cloudinary.uploader.explicit("mgmt/b", type="upload", eager="w_abc!!"))

print(json.dumps(out))
