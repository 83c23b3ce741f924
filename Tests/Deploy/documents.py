"""YAML files as JSON, for the deploy tests; with --schema, also validates every document.

    python3 Tests/Deploy/documents.py FILE...                  # prints [[doc, ...], ...]
    python3 Tests/Deploy/documents.py --schema S.json FILE...  # exits 1 naming what is wrong
"""
import json
import sys

import yaml


def main():
    arguments = sys.argv[1:]
    schema = None
    if arguments[:1] == ["--schema"]:
        import jsonschema
        schema = json.load(open(arguments[1]))
        arguments = arguments[2:]
    files = [[document for document in yaml.safe_load_all(open(path)) if document is not None] for path in arguments]
    if schema is None:
        print(json.dumps(files))
        return
    problems = []
    validator = jsonschema.Draft202012Validator(schema)
    for path, documents in zip(arguments, files):
        for index, document in enumerate(documents):
            for error in validator.iter_errors(document):
                location = "/".join(str(part) for part in error.absolute_path) or "(document)"
                problems.append(f"{path} document {index + 1} at {location}: {error.message}")
    if problems:
        sys.exit("\n".join(problems))
    print(f"{sum(len(documents) for documents in files)} documents valid")


if __name__ == "__main__":
    main()
