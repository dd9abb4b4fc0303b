package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxFileBytes bounds the configuration file.
const maxFileBytes = 1 << 20

// leaf is one scalar of the YAML file.
type leaf struct {
	text string
	line int
	set  bool // present and not null
}

// fileEntity and fileAssignment are the entries of the cache maps.
type fileEntity struct{ table leaf }

type fileAssignment struct{ entityKey, policy, maxEntries, maxBytes leaf }

// file is what the YAML file says: scalars by dotted path, and the cache
// maps. Absent maps are nil; present ones, even empty, are not.
type file struct {
	leaves      map[string]leaf
	entities    map[string]fileEntity
	assignments map[string]fileAssignment
}

// scalarKeys are the YAML paths of the scalar settings, listKeys those
// that may hold a list, and sections the mappings that group them (every
// path's parents).
var scalarKeys, listKeys, sections = func() (scalars, lists, sections map[string]bool) {
	scalars, lists, sections = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range settings(new(Config)) {
		scalars[s.key], lists[s.key] = true, s.isList
		for i := range s.key {
			if s.key[i] == '.' {
				sections[s.key[:i]] = true
			}
		}
	}
	return scalars, lists, sections
}()

// The cache maps, whose keys are the user's names.
const (
	entitiesKey    = "cache.entities"
	assignmentsKey = "cache.settings.assignments"
)

func readFile(path string) (file, []error) {
	data, err := readFileUpTo(path, maxFileBytes)
	if err != nil {
		return file{}, []error{fmt.Errorf("config: %w", err)}
	}
	return parseFile(data)
}

// parseFile parses a configuration file. It walks the YAML tree itself,
// strictly, instead of decoding into tagged structs with KnownFields: so
// every unknown key, misplaced mapping and duplicate is reported at once,
// each by its full dotted path and line, and each scalar reaches the same
// parser as its flag and environment variable.
func parseFile(data []byte) (file, []error) {
	p := parser{out: file{leaves: map[string]leaf{}}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return p.out, nil
		}
		return p.out, []error{fmt.Errorf("config: %w", err)}
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return p.out, []error{errors.New("config: the file must hold exactly one YAML document")}
	}
	if len(doc.Content) == 0 {
		return p.out, nil
	}
	root := resolve(doc.Content[0])
	switch {
	case isNull(root):
	case root.Kind != yaml.MappingNode:
		p.fail("config", root, "the top level must be a mapping of settings")
	default:
		p.walk(root, "")
	}
	return p.out, p.errs
}

// parser collects what a walk finds.
type parser struct {
	out  file
	errs []error
}

// maxFileProblems bounds the problems reported for one file; a broken
// generated file must not print thousands of lines.
const maxFileProblems = 20

func (p *parser) fail(path string, n *yaml.Node, msg string) {
	switch {
	case len(p.errs) < maxFileProblems:
		p.errs = append(p.errs, fmt.Errorf("%s: %s (config line %d)", path, msg, n.Line))
	case len(p.errs) == maxFileProblems:
		p.errs = append(p.errs, fmt.Errorf("config: more problems from line %d on are not shown", n.Line))
	}
}

func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// pairs calls fn for each key and value of mapping m, reporting keys that
// are not plain scalars, merge keys and duplicates.
func (p *parser) pairs(m *yaml.Node, prefix string, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.fail(join(prefix, "?"), k, "keys must be plain strings")
			continue
		}
		path := join(prefix, k.Value)
		if k.ShortTag() == "!!merge" {
			p.fail(path, k, "merge keys are not supported")
			continue
		}
		if line, dup := seen[k.Value]; dup {
			p.fail(path, k, fmt.Sprintf("set twice (first at line %d)", line))
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

// walk reads a mapping of settings.
func (p *parser) walk(m *yaml.Node, prefix string) {
	p.pairs(m, prefix, func(key string, k, v *yaml.Node) {
		path := join(prefix, key)
		switch {
		case sections[path]:
			if p.mapping(path, v) {
				p.walk(v, path)
			}
		case path == entitiesKey:
			if p.mapping(path, v) {
				p.out.entities = named(p, v, path, func(e *fileEntity) map[string]*leaf {
					return map[string]*leaf{"table": &e.table}
				})
			}
		case path == assignmentsKey:
			if p.mapping(path, v) {
				p.out.assignments = named(p, v, path, func(a *fileAssignment) map[string]*leaf {
					return map[string]*leaf{"entityKey": &a.entityKey, "policy": &a.policy,
						"maxEntries": &a.maxEntries, "maxBytes": &a.maxBytes}
				})
			}
		case listKeys[path] && v.Kind == yaml.SequenceNode:
			if l, ok := p.list(path, v); ok {
				p.out.leaves[path] = l
			}
		case scalarKeys[path]:
			if l, ok := p.scalar(path, v); ok {
				p.out.leaves[path] = l
			}
		default:
			p.fail(path, k, "unknown key")
		}
	})
}

// mapping reports whether v is a mapping to descend into; null counts as
// absent, anything else is reported.
func (p *parser) mapping(path string, v *yaml.Node) bool {
	switch {
	case isNull(v):
		return false
	case v.Kind != yaml.MappingNode:
		p.fail(path, v, "must be a mapping")
		return false
	}
	return true
}

// scalar reads a single value; null is an unset leaf.
func (p *parser) scalar(path string, v *yaml.Node) (leaf, bool) {
	if v.Kind != yaml.ScalarNode {
		p.fail(path, v, "must be a single value, not a list or mapping")
		return leaf{}, false
	}
	return leaf{text: v.Value, line: v.Line, set: !isNull(v)}, true
}

// list reads a list of single values as their comma-separated text, the
// form the setting's flag takes.
func (p *parser) list(path string, v *yaml.Node) (leaf, bool) {
	items := make([]string, 0, len(v.Content))
	for _, it := range v.Content {
		it = resolve(it)
		if it.Kind != yaml.ScalarNode || isNull(it) {
			p.fail(path, it, "must be a list of single values")
			return leaf{}, false
		}
		items = append(items, it.Value)
	}
	return leaf{text: strings.Join(items, ","), line: v.Line, set: true}, true
}

// named reads a cache map: each entry a mapping of the scalar fields
// fields names, or null for an entry of defaults.
func named[T any](p *parser, m *yaml.Node, prefix string, fields func(*T) map[string]*leaf) map[string]T {
	out := map[string]T{}
	p.pairs(m, prefix, func(name string, _, v *yaml.Node) {
		path := join(prefix, name)
		var e T
		if p.mapping(path, v) {
			p.fields(v, path, fields(&e))
		} else if !isNull(v) {
			return
		}
		out[name] = e
	})
	return out
}

// fields reads a mapping with a fixed set of scalar keys.
func (p *parser) fields(m *yaml.Node, prefix string, into map[string]*leaf) {
	p.pairs(m, prefix, func(key string, k, v *yaml.Node) {
		dst, ok := into[key]
		if !ok {
			p.fail(join(prefix, key), k, "unknown key")
			return
		}
		if l, ok := p.scalar(join(prefix, key), v); ok {
			*dst = l
		}
	})
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
