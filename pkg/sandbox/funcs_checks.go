package sandbox

import (
	"errors"
	"math"
	"reflect"
	"strings"
)

// Checks of funcLimit: each estimates, from the arguments alone, what a call
// would allocate, and refuses it before the function runs.

func checkRepeat(_ *Budget, name string, args []reflect.Value) error {
	return tooLarge(name, float64(args[0].Int())*float64(args[1].Len()))
}

// checkIndent: indent pads every line; nindent adds a newline first.
func checkIndent(extra int) func(*Budget, string, []reflect.Value) error {
	return func(_ *Budget, name string, args []reflect.Value) error {
		text := args[1].String()
		lines := strings.Count(text, "\n") + 1
		return tooLarge(name, float64(len(text)+extra)+float64(args[0].Int())*float64(lines))
	}
}

func checkReplace(_ *Budget, name string, args []reflect.Value) error {
	old, repl, src := args[0].String(), args[1].String(), args[2].String()
	if len(repl) <= len(old) {
		return nil
	}
	n := strings.Count(src, old)
	return tooLarge(name, float64(len(src))+float64(n)*float64(len(repl)-len(old)))
}

// wrapSize bounds what wrapping text at width inserting sep every line gives.
func wrapSize(name string, width int64, sep, text string) error {
	lines := float64(len(text))/float64(max(width, 1)) + 1
	return tooLarge(name, float64(len(text))+lines*float64(max(len(sep), 1)))
}

func checkWrap(_ *Budget, name string, args []reflect.Value) error {
	return wrapSize(name, args[0].Int(), "\n", args[1].String())
}

func checkWrapWith(_ *Budget, name string, args []reflect.Value) error {
	return wrapSize(name, args[0].Int(), args[1].String(), args[2].String())
}

// steps is how many numbers counting from start towards stop by step gives.
func steps(start, stop, step float64) float64 {
	if step == 0 || (stop-start)/step < 0 {
		return 0
	}
	return math.Ceil((stop - start) / step)
}

func checkUntil(_ *Budget, name string, args []reflect.Value) error {
	return tooLarge(name, math.Abs(float64(args[0].Int()))*8)
}

func checkUntilStep(_ *Budget, name string, args []reflect.Value) error {
	return tooLarge(name, steps(float64(args[0].Int()), float64(args[1].Int()), float64(args[2].Int()))*8)
}

// checkSeq counts as seq does; each number is up to 20 digits and a space,
// and a list of them is made first.
func checkSeq(_ *Budget, name string, args []reflect.Value) error {
	p := make([]float64, len(args))
	for i, a := range args {
		p[i] = float64(a.Int())
	}
	var n float64
	switch len(p) {
	case 1:
		n = math.Abs(p[0]-1) + 1
	case 2:
		n = math.Abs(p[1]-p[0]) + 1
	case 3:
		n = steps(p[0], p[2], p[1]) + 1
	}
	return tooLarge(name, n*(21+8))
}

// checkRand: random text of count characters, made of per bytes each.
func checkRand(per int64) func(*Budget, string, []reflect.Value) error {
	return func(_ *Budget, name string, args []reflect.Value) error {
		return tooLarge(name, float64(args[0].Int())*float64(per))
	}
}

// checkShortText refuses text arguments longer than n bytes: versions and
// constraints are short, and their parsers are not linear.
func checkShortText(n int) func(*Budget, string, []reflect.Value) error {
	return func(_ *Budget, name string, args []reflect.Value) error {
		for _, a := range args {
			if a.Kind() == reflect.String && a.Len() > n {
				return exceeded("%s takes text of at most %s", name, sizeString(int64(n)))
			}
		}
		return nil
	}
}

// checkSplit: splitting text makes one element (of per bytes) for every
// separator; an empty separator splits every character.
func checkSplit(per int64) func(*Budget, string, []reflect.Value) error {
	return func(_ *Budget, name string, args []reflect.Value) error {
		n := strings.Count(args[1].String(), args[0].String()) + 1
		return tooLarge(name, float64(n)*float64(per))
	}
}

func checkSplitN(_ *Budget, name string, args []reflect.Value) error {
	n := strings.Count(args[2].String(), args[0].String()) + 1
	if limit := int(args[1].Int()); limit >= 0 {
		n = min(n, limit)
	}
	return tooLarge(name, float64(n)*entrySize)
}

// checkTotalLen: the result has the elements of all arguments.
func checkTotalLen(_ *Budget, name string, args []reflect.Value) error {
	var n float64
	for _, a := range args {
		n += float64(argLen(a))
	}
	return tooLarge(name, n*entrySize)
}

func checkChunk(_ *Budget, _ string, args []reflect.Value) error {
	if args[0].Int() < 1 {
		return errors.New("chunk size must be at least 1")
	}
	return nil
}

// checkDictKeys: dict prints its keys.
func checkDictKeys(_ *Budget, name string, args []reflect.Value) error {
	keys := make([]reflect.Value, 0, (len(args)+1)/2)
	for i := 0; i < len(args); i += 2 {
		keys = append(keys, args[i])
	}
	return readable(name, keys)
}

// checkSet charges the entry set adds to the dict.
func checkSet(b *Budget, name string, args []reflect.Value) error {
	return b.produce(name, entrySize+int64(args[1].Len())+stringLen(args[2]))
}

// checkJoin: the elements, printed, with a separator between each two.
func checkJoin(_ *Budget, name string, args []reflect.Value) error {
	size, err := valueSize(args[1].Interface(), maxValue)
	if err != nil {
		return err
	}
	elems := 1
	if v := reflect.Indirect(args[1]); v.Kind() == reflect.Interface && !v.IsNil() {
		if k := v.Elem().Kind(); k == reflect.Slice || k == reflect.Array {
			elems = v.Elem().Len()
		}
	}
	return tooLarge(name, float64(size)+float64(elems)*float64(args[0].Len()))
}

// checkMerge charges what the sources add to the destination.
func checkMerge(b *Budget, name string, args []reflect.Value) error {
	for _, src := range args[1:] {
		n, err := valueSize(src.Interface(), maxValue)
		if err != nil {
			return err
		}
		if err := b.produce(name, n); err != nil {
			return err
		}
	}
	return nil
}

func checkParsed(_ *Budget, name string, args []reflect.Value) error {
	if n := args[0].Len(); n > maxParsed {
		return exceeded("%s parses at most %s, not %s", name, sizeString(maxParsed), sizeString(int64(n)))
	}
	return nil
}
