# Decodes a cloud-config the way cloud-init reads it (PyYAML safe_load) and prints
# what the round-trip tests compare, as JSON. File contents are base64 of the bytes
# cloud-init would write.
import base64
import json
import sys

import yaml

doc = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
files = []
for f in doc.get("write_files") or []:
    content = f.get("content", "")
    data = base64.b64decode(content) if f.get("encoding") == "b64" else content.encode("utf-8")
    files.append({"path": f["path"], "permissions": f["permissions"],
                  "content": base64.b64encode(data).decode()})
doc["write_files"] = files
json.dump(doc, sys.stdout)
