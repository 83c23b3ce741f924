import DeriveDigest
import DeriveServe
import DeriveTestSupport
import Foundation
import Testing

/// The management half of Cloudinary's API on `derive serve` (issue 38), as the pinned PyPI
/// `cloudinary` SDK drives it (Tests/Servers/cloudinary_admin.py): the Admin API's `ping`,
/// `config`, `resource_types`, `resources` (paged, by prefix, by ids, `start_at`,
/// `direction`), `resources_by_tag`, `resources_by_context`, `update` and `tags`; the Search
/// API; the Upload API's tags and context calls. On the embedded SQLite queue, and on
/// PostgreSQL with a separate `derive work`.
@Suite(.serialized) struct ManagementTests {
    /// Runs the admin script against a server; its JSON report.
    static func admin(_ port: Int, store: URL) throws -> J {
        let script = Paths.repository.appendingPathComponent("Tests/Servers/cloudinary_admin.py").path
        let jpeg = Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg").path
        let png = Paths.fixtures.appendingPathComponent("formats/png-palette-trns.png").path
        try #require(FileManager.default.fileExists(atPath: png), "the shared fixtures hold \(png)")
        let run = try Python.run("import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
                                 arguments: [script, String(port), ServeTests.cloud, ServeTests.key, ServeTests.secret, jpeg, png, store.path])
        try #require(run.status == 0, "the admin script failed: \(run.output)")
        return J(try JSONSerialization.jsonObject(with: Data(run.output.utf8)))
    }

    /// What every store must answer the same way.
    static func check(_ out: J) {
        #expect(out["uploads"].array.allSatisfy { $0["ok"]["public_id"].string != nil }, "\(out["uploads"])")
        #expect(out["ping"]["ok"]["status"].string == "ok", "\(out["ping"])")
        // The rate-limit headers, as the SDK reads them.
        #expect(out["ping"]["rate"]["allowed"].int == 5000, "\(out["ping"])")
        #expect((out["ping"]["rate"]["remaining"].int ?? -1) >= 0 && (out["ping"]["rate"]["remaining"].int ?? 5000) < 5000, "\(out["ping"])")
        #expect(out["ping"]["rate"]["reset"].array.count >= 6, "an HTTP date the SDK parses: \(out["ping"])")
        #expect(out["config"]["ok"]["cloud_name"].string == ServeTests.cloud && out["config"]["ok"]["settings"]["folder_mode"].string == "fixed",
                "\(out["config"])")
        #expect(out["resource_types"]["ok"]["resource_types"].strings == ["image"], "\(out["resource_types"])")

        // Keyset pages, newest first, every asset once.
        #expect(out["pages"].array.map { $0.strings ?? [] } == [["other/d", "mgmt/c"], ["mgmt/b", "mgmt/a"]], "\(out["pages"])")
        #expect(out["ascending"].strings == ["mgmt/a", "mgmt/b", "mgmt/c", "other/d"], "\(out["ascending"])")
        let prefix = out["prefix"]["ok"]["resources"]
        #expect(prefix.array.map { $0["public_id"].string ?? "" } == ["mgmt/a", "mgmt/b", "mgmt/c"], "by public id: \(out["prefix"])")
        #expect(prefix[0]["tags"].strings == ["red", "sale"] && prefix[0]["context"]["custom"]["kind"].string == "photo", "\(prefix[0])")
        #expect(prefix[2]["tags"].strings == [] && prefix[2]["format"].string == "png", "\(prefix[2])")
        #expect(prefix[0]["url"].string?.contains("/image/upload/v") == true && prefix[0]["width"].int == 1280, "\(prefix[0])")
        #expect(Set(out["by_ids"].strings ?? []) == ["other/d", "mgmt/a"], "\(out["by_ids"])")
        #expect(out["start_at_future"]["ok"]["resources"].value != nil && out["start_at_future"]["ok"]["resources"].array.isEmpty,
                "\(out["start_at_future"])")
        #expect(out["start_at_past"].strings?.count == 4, "\(out["start_at_past"])")
        #expect(out["start_at_bad"]["error"].string == "BadRequest" && out["start_at_bad"]["message"].string?.contains("start_at") == true, "\(out["start_at_bad"])")
        #expect(out["by_tag"].strings == ["mgmt/b", "mgmt/a"], "\(out["by_tag"])")
        #expect(out["by_context_key"].strings == ["mgmt/b", "mgmt/a"], "\(out["by_context_key"])")
        #expect(out["by_context_value"].strings == ["mgmt/a"], "\(out["by_context_value"])")
        #expect(out["bad_cursor"]["error"].string == "BadRequest" && out["bad_cursor"]["message"].string?.contains("next_cursor") == true,
                "\(out["bad_cursor"])")
        #expect(out["bad_max"]["error"].string == "BadRequest" && out["bad_max"]["message"].string?.contains("max_results") == true, "\(out["bad_max"])")

        // update: the tags replaced, a context key set and one removed (an empty value).
        #expect(out["update"]["ok"]["tags"].strings == ["blue", "green"], "\(out["update"])")
        #expect(out["update"]["ok"]["context"]["custom"]["alt"].string == "B" && out["update"]["ok"]["context"]["custom"]["kind"].value == nil,
                "\(out["update"])")
        #expect(out["update_missing"]["error"].string == "NotFound", "\(out["update_missing"])")
        #expect(out["resource_b"]["ok"]["tags"].strings == ["blue", "green"], "read back: \(out["resource_b"])")

        // tags: in code-point order, by prefix, paged.
        #expect(out["tags"]["ok"]["tags"].strings == ["blue", "green", "red", "sale"], "\(out["tags"])")
        #expect(out["tags_prefix"]["ok"]["tags"].strings == ["sale"], "\(out["tags_prefix"])")
        #expect(out["tags_first"]["ok"]["tags"].strings == ["blue"] && out["tags_first"]["ok"]["next_cursor"].string != nil, "\(out["tags_first"])")
        #expect(out["tags_second"]["ok"]["tags"].strings == ["green"], "\(out["tags_second"])")

        // Search: expression, with_field, aggregate, sort_by, paging; bad expressions are 400 and say why.
        let search = out["search"]["ok"]
        #expect(search["total_count"].int == 1 && search["resources"][0]["public_id"].string == "mgmt/a", "\(out["search"])")
        #expect(search["resources"][0]["tags"].strings == ["red", "sale"] && search["resources"][0]["context"]["custom"]["alt"].string == "A",
                "\(search)")
        #expect(search["aggregations"]["format"]["jpg"].int == 1 && search["time"].int != nil, "\(search)")
        let folder = out["search_folder"]["ok"]
        #expect(folder["resources"].array.map { $0["public_id"].string ?? "" } == ["mgmt/a", "mgmt/b", "mgmt/c"], "\(folder)")
        #expect(folder["aggregations"]["format"]["jpg"].int == 2 && folder["aggregations"]["format"]["png"].int == 1, "\(folder)")
        #expect(folder["resources"][0]["folder"].string == "mgmt" && folder["resources"][0]["filename"].string == "a", "\(folder)")
        #expect(folder["resources"][0]["tags"].value == nil, "tags only with with_field: \(folder)")
        #expect(out["search_pages"].array.map { $0.strings ?? [] } == [["mgmt/c"], ["mgmt/b"], ["mgmt/a"]], "\(out["search_pages"])")
        #expect(out["search_bytes"].strings == ["mgmt/c", "mgmt/b", "mgmt/a"], "\(out["search_bytes"])")
        #expect(out["search_bad"]["error"].string == "BadRequest" && out["search_bad"]["message"].string?.contains("search expression") == true,
                "\(out["search_bad"])")
        #expect(out["search_bad_field"]["error"].string == "BadRequest" && out["search_bad_field"]["message"].string?.contains("colour") == true,
                "\(out["search_bad_field"])")

        // The Upload API's tags and context calls: the ids changed, the change read back.
        #expect(out["add_tag"]["ok"]["public_ids"].strings == ["mgmt/a", "mgmt/c"], "a missing id is left out: \(out["add_tag"])")
        #expect(out["after_add_tag"].array.map { $0.strings ?? [] } == [["red", "sale", "new"], ["new"]], "\(out["after_add_tag"])")
        #expect(out["remove_tag"]["ok"]["public_ids"].strings == ["mgmt/a"] && out["after_remove_tag"].strings == ["sale", "new"],
                "\(out["remove_tag"]) \(out["after_remove_tag"])")
        #expect(out["after_replace_tag"].strings == ["only"], "\(out["replace_tag"]) \(out["after_replace_tag"])")
        #expect(out["remove_all_tags"]["ok"]["public_ids"].strings == ["mgmt/b"] && out["after_remove_all_tags"].strings == [],
                "\(out["remove_all_tags"]) \(out["after_remove_all_tags"])")
        #expect(out["after_add_context"]["caption"].string == "x=y|z" && out["after_add_context"]["kind"].string == "still"
                && out["after_add_context"]["alt"].string == "A", "escaped = and | kept; other keys kept: \(out["after_add_context"])")
        #expect(out["remove_all_context"]["ok"]["public_ids"].strings == ["mgmt/a"] && (out["after_remove_all_context"].value as? [String: Any])?.isEmpty == true,
                "\(out["remove_all_context"]) \(out["after_remove_all_context"])")
        #expect(out["tags_after"]["ok"]["tags"].strings == ["new", "only", "sale"], "\(out["tags_after"])")

        // A wrong secret reaches none of it.
        #expect(out["wrong_admin"]["error"].string == "AuthorizationRequired", "\(out["wrong_admin"])")
        #expect(out["wrong_search"]["error"].string == "AuthorizationRequired", "\(out["wrong_search"])")
        #expect(out["wrong_tags"]["error"].string == "AuthorizationRequired", "\(out["wrong_tags"])")
        #expect(out["wrong_destroy"]["error"].string == "AuthorizationRequired", "\(out["wrong_destroy"])")
        #expect(out["wrong_delete"]["error"].string == "AuthorizationRequired", "\(out["wrong_delete"])")
        #expect(out["after_wrong"].strings == ["sale", "new"], "\(out["after_wrong"])")

        // Deleting: destroy, delete_resources by ids, prefix and tag; from the answer on, neither
        // the asset nor its derivative is delivered; an original shared with a kept asset still is.
        #expect(out["before_delete"]["derived"].int == 200 && out["before_delete"]["original"].int == 200, "\(out["before_delete"])")
        #expect(out["destroy"]["ok"]["result"].string == "ok" && out["destroy_again"]["ok"]["result"].string == "not found",
                "\(out["destroy"]) \(out["destroy_again"])")
        #expect(out["after_destroy"]["resource"].string == "NotFound" && out["after_destroy"]["original"].int == 404, "\(out["after_destroy"])")
        // The store: two originals (the JPEG four assets share, mgmt/c's PNG) and del/e's three
        // derivatives; each deletion takes away the objects nothing names any more, and no other.
        func split(_ name: String) -> (originals: [String], derivatives: [String]) {
            let keys = out[name].strings ?? []
            return (keys.filter { $0.hasPrefix("originals/") }, keys.filter { !$0.hasPrefix("originals/") })
        }
        #expect(split("objects_before").originals.count == 2 && split("objects_before").derivatives.count == 3, "\(out["objects_before"])")
        let jpegOriginal = split("objects_before").originals.filter { $0.hasSuffix(".jpg") }
        #expect(jpegOriginal.count == 1, "\(out["objects_before"])")
        #expect(split("objects_after_destroy").originals == jpegOriginal && split("objects_after_destroy").derivatives.count == 3,
                "destroy frees mgmt/c's PNG, which nothing else names: \(out["objects_after_destroy"])")
        let deletedDerived = out["delete_derived"]["ok"]["deleted"]
        #expect((deletedDerived.value as? [String: String])?.values.sorted() == ["deleted", "not_found"], "\(out["delete_derived"])")
        #expect(out["after_delete_derived"].strings?.sorted() == ["c_scale,w_20/jpg", "c_scale,w_40/jpg"], "\(out["after_delete_derived"])")
        #expect(split("objects_after_delete_derived").derivatives.count == 2, "\(out["objects_after_delete_derived"])")
        #expect(out["delete_by_transformation"]["ok"]["deleted"]["del/e"].string == "deleted", "\(out["delete_by_transformation"])")
        #expect(out["after_delete_by_transformation"].strings == ["c_scale,w_20/jpg"], "\(out["after_delete_by_transformation"])")
        #expect(split("objects_after_delete_by_transformation").derivatives.count == 1, "\(out["objects_after_delete_by_transformation"])")
        #expect(out["keep_original"]["ok"]["deleted"]["del/e"].string == "deleted"
                && out["keep_original"]["ok"]["deleted_counts"]["del/e"]["original"].int == 0
                && out["keep_original"]["ok"]["deleted_counts"]["del/e"]["derived"].int == 1, "\(out["keep_original"])")
        #expect(out["after_keep_original"]["derived"].int != 200 && out["after_keep_original"]["original"].int == 200
                && out["after_keep_original"]["listed"].strings == [], "\(out["after_keep_original"])")
        #expect(split("objects_after_keep_original").derivatives == [] && split("objects_after_keep_original").originals == jpegOriginal,
                "\(out["objects_after_keep_original"])")
        #expect(out["delete_resources"]["ok"]["deleted"]["del/e"].string == "deleted" && out["delete_resources"]["ok"]["deleted"]["nope"].string == "not_found"
                && out["delete_resources"]["ok"]["partial"].bool == false, "\(out["delete_resources"])")
        #expect(out["after_delete_resources"]["derived"].int == 404 && out["after_delete_resources"]["original"].int == 404,
                "\(out["after_delete_resources"])")
        #expect(out["delete_by_prefix"]["ok"]["deleted"]["other/d"].string == "deleted", "\(out["delete_by_prefix"])")
        #expect(out["delete_by_tag"]["ok"]["deleted"]["mgmt/a"].string == "deleted", "\(out["delete_by_tag"])")
        #expect(out["shared_original"]["deleted_a"].int == 404 && out["shared_original"]["kept_b"].int == 200, "\(out["shared_original"])")
        #expect(out["left"].strings == ["mgmt/b"] && out["search_left"].int == 1, "\(out["left"]) \(out["search_left"])")
        #expect(out["reupload"].string == "png" && out["after_reupload"].int == 200, "a deleted id takes a new upload: \(out["reupload"])")
        #expect(split("objects_after").derivatives == [] && split("objects_after").originals.count == 2
                && split("objects_after").originals.contains(jpegOriginal.first ?? "-"),
                "mgmt/b keeps the JPEG; the new mgmt/a stores its PNG again: \(out["objects_after"])")

        // rename: the asset and its derivative (and its unsigned URL) under the new id, the old one
        // gone; the objects stay; a taken id needs overwrite, which frees what only the replaced asset named.
        #expect(out["before_rename"]["derived"].int == 200, "\(out["before_rename"])")
        #expect(out["rename"]["ok"]["public_id"].string == "ren/s" && out["rename"]["ok"]["format"].string == "jpg", "\(out["rename"])")
        #expect(out["after_rename"]["old"].int == 404 && out["after_rename"]["new"].int == 200 && out["after_rename"]["old_derived"].int == 404
                && out["after_rename"]["derived"].int == 200 && out["after_rename"]["listed"].strings == ["c_scale,w_25/jpg"]
                && out["after_rename"]["resource_old"].string == "NotFound", "\(out["after_rename"])")
        #expect(out["rename_exists"]["error"].string == "BadRequest" && out["rename_exists"]["message"].string?.contains("already exists") == true,
                "\(out["rename_exists"])")
        #expect(out["rename_missing"]["error"].string == "NotFound", "\(out["rename_missing"])")
        #expect(out["rename_to_type"]["error"].string == "BadRequest" && out["rename_to_type"]["message"].string?.contains("to_type") == true,
                "\(out["rename_to_type"])")
        #expect(out["rename_overwrite"]["ok"]["public_id"].string == "ren/t" && out["rename_overwrite"]["ok"]["format"].string == "jpg",
                "\(out["rename_overwrite"])")
        #expect(out["after_overwrite"]["t"].int == 200 && out["after_overwrite"]["s"].int == 404 && out["after_overwrite"]["listed"].strings == ["c_scale,w_25/jpg"],
                "\(out["after_overwrite"])")
        let beforeRename = (out["before_rename"]["objects"].strings ?? [])
        #expect(beforeRename.count == 4 && beforeRename.filter { !$0.hasPrefix("originals/") }.count == 2, "two originals, two derivatives: \(beforeRename)")
        let afterRename = split("objects_after_rename")
        #expect(afterRename.originals.count == 2 && afterRename.derivatives.count == 1 && afterRename.derivatives.allSatisfy({ beforeRename.contains($0) }),
                "ren/t's PNG derivative went with it; its PNG original is the new mgmt/a's too: \(out["objects_after_rename"])")

        // Folders are the prefixes of public ids; only an empty folder may be deleted, and Derive keeps none.
        func names(_ answer: J) -> [String] { answer["ok"]["folders"].array.compactMap { $0["name"].string } }
        #expect(names(out["root_folders"]) == ["mgmt", "ren"] && out["root_folders"]["ok"]["folders"][1]["path"].string == "ren", "\(out["root_folders"])")
        #expect(out["root_folders_paged"].array.map(names) == [["mgmt"], ["ren"]], "\(out["root_folders_paged"])")
        #expect(names(out["subfolders"]) == ["sub"] && out["subfolders"]["ok"]["folders"][0]["path"].string == "ren/sub", "\(out["subfolders"])")
        #expect(out["subfolders_missing"]["error"].string == "NotFound", "\(out["subfolders_missing"])")
        #expect(out["create_folder"]["ok"]["success"].bool == true && out["create_folder"]["ok"]["path"].string == "new/empty", "\(out["create_folder"])")
        #expect(out["delete_folder_full"]["error"].string == "BadRequest" && out["delete_folder_full"]["message"].string?.contains("not empty") == true,
                "\(out["delete_folder_full"])")
        #expect(out["delete_folder_missing"]["error"].string == "NotFound", "\(out["delete_folder_missing"])")
        let usage = out["usage"]["ok"]
        #expect(usage["resources"].int == 4 && usage["derived_resources"].int == 1 && (usage["storage"]["usage"].int ?? 0) > 100_000
                && usage["objects"]["usage"].int == 5, "mgmt/a, mgmt/b, ren/t, ren/sub/x and ren/t's derivative: \(out["usage"])")

        // explicit: the eager output made from the stored original and recorded as the asset's.
        #expect(out["explicit"]["ok"]["eager"][0]["width"].int == 15 && out["explicit"]["ok"]["public_id"].string == "mgmt/b", "\(out["explicit"])")
        #expect(out["after_explicit"]["derived"].strings == ["c_scale,w_15/jpg"] && out["after_explicit"]["tags"].strings == ["ex"]
                && out["after_explicit"]["context"]["k"].string == "v" && out["after_explicit"]["context"]["alt"].string == "B"
                && out["after_explicit"]["url"].int == 200, "\(out["after_explicit"])")
        #expect(out["explicit_async"]["ok"]["eager"][0]["status"].string == "processing", "answered at once: \(out["explicit_async"])")
        #expect(out["explicit_missing"]["error"].string == "NotFound", "\(out["explicit_missing"])")
        #expect(out["explicit_bad"]["error"].string == "BadRequest", "\(out["explicit_bad"])")
    }

    @Test(.enabled(if: Python.has("cloudinary"), "needs the cloudinary package the test command installs"))
    func theSDKsManagementCallsOnSQLite() throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, port) = try ServeTests.start(folder)
        defer { server.signal(SIGKILL) }
        Self.check(try Self.admin(port, store: folder.appendingPathComponent("store")))
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }

    @Test(.enabled(if: TestServers.postgresAvailable && Python.has("cloudinary"), "needs PostgreSQL and the cloudinary package the test command provides"))
    func theSDKsManagementCallsOnPostgreSQL() throws {
        let (url, drop) = try TestQueue.createDatabase()
        defer { drop() }
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrated = try DeriveBinary.run(["migrate", "--database", url])
        try #require(migrated.status == 0, "\(migrated.stderr)")
        let store = folder.appendingPathComponent("store").path
        let server = try BackgroundProcess(["serve", "--port", "0", "--database", url, "--store", store],
                                           environment: ["DERIVE_CLOUD_NAME": ServeTests.cloud, "DERIVE_API_KEY": ServeTests.key,
                                                         "DERIVE_API_SECRET": ServeTests.secret])
        defer { server.signal(SIGKILL) }
        let port = try #require(server.listeningPort(), "derive serve did not say where it listens: \(server.logLines.joined(separator: " "))")
        // The eager output of the deletion case is made by a separate worker, as in production.
        let worker = try BackgroundProcess(["work", "--database", url, "--store", store, "--slots", "1", "--poll-interval", "0.05"])
        defer { worker.signal(SIGKILL) }
        Self.check(try Self.admin(port, store: URL(fileURLWithPath: store)))
        worker.signal(SIGTERM)
        server.signal(SIGTERM)
        #expect(worker.wait(timeout: 30) == 0)
        #expect(server.wait(timeout: 30) == 0)
    }

    /// Requests no SDK sends: without credentials, with a wrong secret, a malformed
    /// Authorization, a bad expression, a huge or forged cursor, a body that is not JSON, an
    /// unsigned tags call, a rate limit used up. Each is a 4xx that says why; the service stays up.
    @Test func malformedManagementRequestsAre4xxAndSayWhy() async throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, port) = try ServeTests.start(folder, extra: ["DERIVE_SERVE_ADMIN_RATE_LIMIT": "40"])
        defer { server.signal(SIGKILL) }
        let cloud = ServeTests.cloud
        let good = "Basic " + Data("\(ServeTests.key):\(ServeTests.secret)".utf8).base64EncodedString()
        let wrong = "Basic " + Data("\(ServeTests.key):nope".utf8).base64EncodedString()
        func send(_ method: String, _ target: String, auth: String? = good, type: String = "application/json", body: String = "") async -> RawHTTP.Reply {
            var headers: [(String, String)] = [("Content-Type", type)]
            if let auth { headers.append(("Authorization", auth)) }
            return await RawHTTP.send(RawHTTP.request(method, target, headers: headers, body: Array(body.utf8)), port: port)
        }
        func error(_ reply: RawHTTP.Reply) -> String { ServeTests.header("X-Cld-Error", in: reply) ?? "" }

        for target in ["/v1_1/\(cloud)/ping", "/v1_1/\(cloud)/resources/image", "/v1_1/\(cloud)/tags/image", "/v1_1/\(cloud)/resources/image/upload/x"] {
            let none = await send("GET", target, auth: nil)
            #expect(none.status == 401 && error(none).contains("api_key"), "\(target): \(none.text.prefix(300))")
            let bad = await send("GET", target, auth: wrong)
            #expect(bad.status == 401 && error(bad).contains("Invalid credentials"), "\(target): \(bad.text.prefix(300))")
            let garbage = await send("GET", target, auth: "Basic %%%")
            #expect(garbage.status == 401, "\(target): \(garbage.text.prefix(300))")
        }
        let unauthorisedSearch = await send("POST", "/v1_1/\(cloud)/resources/search", auth: nil, body: #"{"expression":""}"#)
        #expect(unauthorisedSearch.status == 401)

        let badExpression = await send("POST", "/v1_1/\(cloud)/resources/search", body: #"{"expression":"tags=(red"}"#)
        #expect(badExpression.status == 400 && error(badExpression).contains("Invalid search expression"), "\(badExpression.text.prefix(300))")
        let longExpression = await send("POST", "/v1_1/\(cloud)/resources/search", body: #"{"expression":""# + String(repeating: "(", count: 5000) + #""}"#)
        #expect(longExpression.status == 400, "\(longExpression.text.prefix(300))")
        let deep = await send("POST", "/v1_1/\(cloud)/resources/search", body: #"{"expression":""# + String(repeating: "(", count: 40) + "a" + String(repeating: ")", count: 40) + #""}"#)
        #expect(deep.status == 400, "\(deep.text.prefix(300))")
        let notJSON = await send("POST", "/v1_1/\(cloud)/resources/search", body: "expression=tags:red")
        #expect(notJSON.status == 400 && error(notJSON).contains("JSON"), "\(notJSON.text.prefix(300))")
        let badSort = await send("POST", "/v1_1/\(cloud)/resources/search", body: #"{"sort_by":[{"bytes":"desc"}]}"#)
        #expect(badSort.status == 400 && error(badSort).contains("sort_by"), "\(badSort.text.prefix(300))")

        let hugeCursor = await send("GET", "/v1_1/\(cloud)/resources/image?next_cursor=\(String(repeating: "A", count: 6000))")
        #expect(hugeCursor.status == 400 && error(hugeCursor).contains("next_cursor"), "\(hugeCursor.text.prefix(300))")
        let forged = Data("p:0:x".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let otherOrder = await send("GET", "/v1_1/\(cloud)/resources/image?next_cursor=\(forged)")
        #expect(otherOrder.status == 400 && error(otherOrder).contains("next_cursor"), "a prefix cursor in a dated listing: \(otherOrder.text.prefix(300))")
        let hugeSearchCursor = await send("POST", "/v1_1/\(cloud)/resources/search", body: #"{"next_cursor":""# + String(repeating: "Q", count: 5000) + #""}"#)
        #expect(hugeSearchCursor.status == 400 && error(hugeSearchCursor).contains("next_cursor"), "\(hugeSearchCursor.text.prefix(300))")
        let badTagCursor = await send("GET", "/v1_1/\(cloud)/tags/image?next_cursor=%00")
        #expect(badTagCursor.status == 400, "\(badTagCursor.text.prefix(300))")
        let video = await send("GET", "/v1_1/\(cloud)/resources/video")
        #expect(video.status == 404 && error(video).contains("images only"), "\(video.text.prefix(300))")
        let updateNotJSON = await send("POST", "/v1_1/\(cloud)/resources/image/upload/x", body: "{")
        #expect(updateNotJSON.status == 400, "\(updateNotJSON.text.prefix(300))")

        // The Upload API's management calls are signed: unsigned or forged, refused.
        let unsigned = await send("POST", "/v1_1/\(cloud)/image/tags", auth: nil, type: "application/x-www-form-urlencoded",
                                  body: "tag=x&public_ids[]=a&command=add")
        #expect(unsigned.status == 401, "\(unsigned.text.prefix(300))")
        let now = Int(Date().timeIntervalSince1970)
        let forgedSignature = await send("POST", "/v1_1/\(cloud)/image/context", auth: nil, type: "application/x-www-form-urlencoded",
                                         body: "context=a%3Db&public_ids[]=a&command=add&timestamp=\(now)&api_key=\(ServeTests.key)&signature=\(String(repeating: "0", count: 40))")
        #expect(forgedSignature.status == 401 && error(forgedSignature).contains("Invalid Signature"), "\(forgedSignature.text.prefix(300))")
        let unsignedDestroy = await send("POST", "/v1_1/\(cloud)/image/destroy", auth: nil, type: "application/x-www-form-urlencoded", body: "public_id=a")
        #expect(unsignedDestroy.status == 401, "\(unsignedDestroy.text.prefix(300))")
        let anonymousDelete = await send("DELETE", "/v1_1/\(cloud)/resources/image/upload", auth: nil, body: #"{"all":true}"#)
        #expect(anonymousDelete.status == 401, "\(anonymousDelete.text.prefix(300))")
        let deleteNothing = await send("DELETE", "/v1_1/\(cloud)/resources/image/upload", body: "{}")
        #expect(deleteNothing.status == 400 && error(deleteNothing).contains("public_ids"), "\(deleteNothing.text.prefix(300))")
        let anonymousDerived = await send("DELETE", "/v1_1/\(cloud)/derived_resources", auth: nil, body: #"{"derived_resource_ids":["a"]}"#)
        #expect(anonymousDerived.status == 401, "\(anonymousDerived.text.prefix(300))")
        let noDerivedIDs = await send("DELETE", "/v1_1/\(cloud)/derived_resources", body: "{}")
        #expect(noDerivedIDs.status == 400 && error(noDerivedIDs).contains("derived_resource_ids"), "\(noDerivedIDs.text.prefix(300))")
        let readDerived = await send("GET", "/v1_1/\(cloud)/derived_resources")
        #expect(readDerived.status == 405, "\(readDerived.text.prefix(300))")
        let foreignDerived = await send("DELETE", "/v1_1/\(cloud)/derived_resources", body: #"{"derived_resource_ids":["zz","%00","0123"]}"#)
        #expect(foreignDerived.status == 200 && foreignDerived.text.contains("not_found"), "ids Derive did not write: \(foreignDerived.text.prefix(300))")
        let badTransformation = await send("DELETE", "/v1_1/\(cloud)/resources/image/upload",
                                           body: #"{"public_ids":["a"],"transformations":"w_abc!!","keep_original":true}"#)
        #expect(badTransformation.status == 400 && error(badTransformation).contains("w_abc"), "\(badTransformation.text.prefix(300))")
        let badTransformations = await send("DELETE", "/v1_1/\(cloud)/resources/image/upload", body: #"{"public_ids":["a"],"transformations":7}"#)
        #expect(badTransformations.status == 400 && error(badTransformations).contains("transformations"), "\(badTransformations.text.prefix(300))")
        for (target, reason) in [("/v1_1/\(cloud)/folders?max_results=0", "max_results"), ("/v1_1/\(cloud)/folders?next_cursor=zz%00", "next_cursor"),
                                 ("/v1_1/\(cloud)/folders/a%20b", "folder path")] {
            let reply = await send("GET", target)
            #expect(reply.status == 400 && error(reply).contains(reason), "\(target): \(reply.text.prefix(300))")
        }
        let anonymousFolders = await send("GET", "/v1_1/\(cloud)/folders", auth: nil)
        #expect(anonymousFolders.status == 401, "\(anonymousFolders.text.prefix(300))")
        let anonymousUsage = await send("GET", "/v1_1/\(cloud)/usage", auth: nil)
        #expect(anonymousUsage.status == 401, "\(anonymousUsage.text.prefix(300))")
        let anonymousRename = await send("POST", "/v1_1/\(cloud)/image/rename", auth: nil, type: "application/x-www-form-urlencoded",
                                         body: "from_public_id=a&to_public_id=b")
        #expect(anonymousRename.status == 401, "\(anonymousRename.text.prefix(300))")
        var fields = ["tag": "x", "public_ids": "a", "command": "explode", "timestamp": String(now)]
        fields["signature"] = CloudinarySigning.sign(fields, secret: ServeTests.secret, algorithm: .sha1)
        let badCommand = await send("POST", "/v1_1/\(cloud)/image/tags", auth: nil, type: "application/x-www-form-urlencoded",
                                    body: "tag=x&public_ids[]=a&command=explode&timestamp=\(now)&api_key=\(ServeTests.key)&signature=\(fields["signature"]!)")
        #expect(badCommand.status == 400 && error(badCommand).contains("command"), "signed, then refused for its command: \(badCommand.text.prefix(300))")

        // The hour's calls used up: 420, with the headers saying none remain.
        var last = await send("GET", "/v1_1/\(cloud)/ping")
        for _ in 0..<40 where last.status == 200 { last = await send("GET", "/v1_1/\(cloud)/ping") }
        #expect(last.status == 420 && ServeTests.header("X-FeatureRateLimit-Remaining", in: last) == "0", "\(last.text.prefix(300))")
        #expect(ServeTests.header("X-FeatureRateLimit-Limit", in: last) == "40")

        let health = await send("GET", "/healthz", auth: nil)
        #expect(health.status == 200, "the service is still up")
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }
}
