package sandbox

import (
	"fmt"
)

// templateFunc is one function templates can call.
type templateFunc struct {
	fn any
	// limit says how calls are bounded; nil: the function is called as is.
	limit *funcLimit
	// bound, if set, makes the function for one binding (funcs_print.go).
	bound func(s *slot) any
}

// bind returns the function as the templates of one binding call it.
func (f templateFunc) bind(name string, s *slot) any {
	switch {
	case f.bound != nil:
		return f.bound(s)
	case f.limit == nil:
		return f.fn
	}
	return wrap(name, f.fn, f.limit, s)
}

var (
	produces = &funcLimit{}
	reads    = &funcLimit{deep: true}
)

// plainFuncs are called as they are: they return a number, a bool, a small
// fixed-size text or (part of) one of their arguments, in time bounded by
// their arguments.
var plainFuncs = setOf(
	"hello", "contains", "hasPrefix", "hasSuffix", "atoi", "int64", "int", "float64",
	"add1", "add", "sub", "div", "mod", "mul", "randInt", "add1f", "addf", "subf", "divf", "mulf",
	"biggest", "max", "min", "maxf", "minf", "ceil", "floor", "round", "toDecimal",
	"empty", "coalesce", "all", "any", "ternary", "default", "typeOf", "typeIs", "typeIsLike", "kindOf", "kindIs",
	"isAbs", "osIsAbs", "get", "hasKey", "first", "mustFirst", "last", "mustLast", "slice", "mustSlice", "dig", "unset",
	"uuidv4", "plural", "trim", "trimAll", "trimall", "trimSuffix", "trimPrefix", "base", "osBase", "ext", "osExt",
	"substr", "trunc", "sha1sum", "sha256sum", "sha512sum", "adler32sum", "fail",
	"now", "toDate", "mustToDate", "unixEpoch", "duration", "durationRound", "ago",
	"dateModify", "mustDateModify", "date_modify", "must_date_modify", namedTemplateFunc,
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// funcLimits bounds every other function; limitOf fails for a function
// nobody looked at, so a new sprig version cannot add one unbounded.
var funcLimits = map[string]*funcLimit{
	// Text from text, at most a few times the input.
	"abbrev": produces, "abbrevboth": produces, "upper": produces, "lower": produces, "title": produces,
	"untitle": produces, "nospace": produces, "initials": produces, "swapcase": produces, "shuffle": produces,
	"snakecase": produces, "camelcase": produces, "kebabcase": produces, "b64enc": produces, "b64dec": produces,
	"b32enc": produces, "b32dec": produces, "dir": produces, "clean": produces, "osClean": produces, "osDir": produces,
	"regexQuoteMeta": produces, "urlParse": produces, "urlJoin": produces, "bcrypt": produces, "htpasswd": produces,
	"buildCustomCert": produces, "encryptAES": produces, "decryptAES": produces,
	"date": produces, "htmlDate": produces, "dateInZone": produces, "date_in_zone": produces, "htmlDateInZone": produces,
	// Text whose size an argument chooses.
	"repeat": {check: checkRepeat}, "indent": {check: checkIndent(0)}, "nindent": {check: checkIndent(1)},
	"replace": {check: checkReplace}, "wrap": {check: checkWrap}, "wrapWith": {check: checkWrapWith},
	"seq": {check: checkSeq}, "randAlphaNum": {check: checkRand(4)}, "randAlpha": {check: checkRand(4)},
	"randAscii": {check: checkRand(4)}, "randNumeric": {check: checkRand(4)}, "randBytes": {check: checkRand(2)},
	"semver": {check: checkShortText(1 << 10)}, "semverCompare": {check: checkShortText(1 << 10)},
	// Lists and dicts.
	"tuple": produces, "list": produces, "append": produces, "push": produces, "mustAppend": produces,
	"mustPush": produces, "prepend": produces, "mustPrepend": produces, "rest": produces, "mustRest": produces,
	"initial": produces, "mustInitial": produces, "reverse": produces, "mustReverse": produces,
	"compact": produces, "mustCompact": produces, "pluck": produces, "pick": produces, "omit": produces, "values": produces,
	"until": {check: checkUntil}, "untilStep": {check: checkUntilStep},
	"splitList": {check: checkSplit(elemSize)}, "split": {check: checkSplit(entrySize)}, "splitn": {check: checkSplitN},
	"regexSplit": produces, "regexFindAll": produces, "mustRegexSplit": produces, "mustRegexFindAll": produces,
	"keys": {check: checkTotalLen}, "concat": {check: checkTotalLen},
	"chunk": {check: checkChunk}, "mustChunk": {check: checkChunk},
	"dict": {check: checkDictKeys}, "set": {check: checkSet, shares: true},
	// Functions that print, serialize, compare or copy their arguments.
	"quote": reads, "squote": reads, "cat": reads, "toString": reads, "toStrings": reads, "sortAlpha": reads,
	"join":   {check: checkJoin, deep: true},
	"toJson": reads, "mustToJson": reads, "toPrettyJson": reads, "mustToPrettyJson": reads,
	"toRawJson": reads, "mustToRawJson": reads, "toYaml": reads, "toToml": reads,
	"deepEqual": reads, "has": reads, "mustHas": reads, "without": reads, "mustWithout": reads,
	"uniq": reads, "mustUniq": reads,
	"deepCopy": {deep: true, deepResult: true}, "mustDeepCopy": {deep: true, deepResult: true},
	"merge": {check: checkMerge, deep: true, shares: true}, "mustMerge": {check: checkMerge, deep: true, shares: true},
	"mergeOverwrite": {check: checkMerge, deep: true, shares: true}, "mustMergeOverwrite": {check: checkMerge, deep: true, shares: true},
	// Parsers build values many times the size of their text.
	"fromJson": {check: checkParsed, deepResult: true}, "mustFromJson": {check: checkParsed, deepResult: true},
	"fromJsonArray": {check: checkParsed, deepResult: true}, "fromYaml": {check: checkParsed, deepResult: true},
	"fromYamlArray": {check: checkParsed, deepResult: true}, "fromToml": {check: checkParsed, deepResult: true},
	// Regular expressions bound their own work and results (funcs_regex.go).
	"regexMatch": produces, "mustRegexMatch": produces, "regexFind": produces, "mustRegexFind": produces,
	"regexReplaceAll": produces, "mustRegexReplaceAll": produces,
	"regexReplaceAllLiteral": produces, "mustRegexReplaceAllLiteral": produces,
}

func limitOf(name string) *funcLimit {
	if plainFuncs[name] {
		return nil
	}
	if l, ok := funcLimits[name]; ok {
		return l
	}
	panic(fmt.Sprintf("template function %q has no budget limit: add it to plainFuncs or funcLimits", name))
}
