// The web APIs a bare QuickJS-NG lacks, evaluated once into every sandbox snapshot as one
// classic script. Each piece defines a global only when it is missing or broken, so the same
// file serves engines that already ship some of them (QuickJS-NG has atob/btoa/DOMException).
import "./text-encoding.js";
import "core-js/modules/web.dom-exception.constructor.js";
import "core-js/modules/web.dom-exception.to-string-tag.js";
import "core-js/modules/web.atob.js";
import "core-js/modules/web.btoa.js";
import "core-js/modules/web.url.js";
import "core-js/modules/web.url.to-json.js";
import "core-js/modules/web.url.can-parse.js";
import "core-js/modules/web.url.parse.js";
import "core-js/modules/web.url-search-params.js";
import "core-js/modules/web.url-search-params.delete.js";
import "core-js/modules/web.url-search-params.has.js";
import "core-js/modules/web.url-search-params.size.js";
import "core-js/modules/web.structured-clone.js";
import "./base64-arity.js";
