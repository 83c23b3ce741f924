/// `fl_getinfo`: what Cloudinary returns instead of the image, as a JSON document Derive
/// writes beside it (a batch job has no response to replace): the source's size and bytes
/// (`input`), the crops the chain made in the coordinates of the image each cropped
/// (`resize`), the faces found in upright source pixels (`faces`, when the chain looked), and
/// the output's format, size and bytes (`output`).
public enum GetInfo {
    public static func document(source: SourceMetadata, output: RenderedOutput) -> JSONValue {
        let facts = source.inspection.facts
        var members = [JSONMember(key: "input", value: .object([
            "width": .int(facts.orientedSize.width), "height": .int(facts.orientedSize.height),
            "bytes": .int(source.bytes), "format": .string(facts.format.rawValue),
        ]))]
        if !output.metadata.crops.isEmpty {
            members.append(JSONMember(key: "resize", value: .array(output.metadata.crops.map { crop in
                .object(["x": .int(crop.rect.x), "y": .int(crop.rect.y), "width": .int(crop.rect.width), "height": .int(crop.rect.height)])
            })))
        }
        if let faces = source.faces {
            members.append(JSONMember(key: "faces", value: .array(faces.faces.map { face in
                .object(["x": .int(face.box.x), "y": .int(face.box.y), "width": .int(face.box.width), "height": .int(face.box.height)])
            })))
        }
        let m = output.metadata
        members.append(JSONMember(key: "output", value: .object([
            "format": .string(m.format.rawValue), "width": .int(m.width), "height": .int(m.height), "bytes": .int(m.bytes),
        ])))
        return .object(members)
    }
}
