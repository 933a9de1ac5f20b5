// The keys (field number << 3 | wire type) of storage_onestore_v3's EntityProto that the entity
// walker (entity_pick.c) and its templates (entity_template.c) read, one list for both, as in
// Sources/RankingsKit/Export/EntityProto.swift. Internal to CKernels (not in include/).
#ifndef RANKINGS_ENTITY_KEYS_H
#define RANKINGS_ENTITY_KEYS_H

enum {
    KEY_ENTITY_KEY = 13 << 3 | 2, KEY_PROPERTY = 14 << 3 | 2, KEY_RAW_PROPERTY = 15 << 3 | 2,
    KEY_PATH = 14 << 3 | 2,
    KEY_ELEMENT_START = 1 << 3 | 3, KEY_ELEMENT_END = 1 << 3 | 4,
    KEY_ELEMENT_KIND = 2 << 3 | 2, KEY_ELEMENT_ID = 3 << 3 | 0, KEY_ELEMENT_NAME = 4 << 3 | 2,
    KEY_MEANING = 1 << 3 | 0, KEY_NAME = 3 << 3 | 2, KEY_MULTIPLE = 4 << 3 | 0, KEY_VALUE = 5 << 3 | 2,
    KEY_INT64 = 1 << 3 | 0, KEY_BOOLEAN = 2 << 3 | 0, KEY_STRING = 3 << 3 | 2, KEY_DOUBLE = 4 << 3 | 1,
};

#endif
