// tl::OrderedDict: LibTorch's insertion-ordered dictionary (a module's parameters, buffers and
// children by name), items with key() and value(), lookup by key in O(1).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tensorlet/tensor/error.h"

namespace tensorlet {

template <typename Key, typename Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return pair_.first; }
    Value& value() noexcept { return pair_.second; }
    const Value& value() const noexcept { return pair_.second; }
    Value& operator*() noexcept { return value(); }
    const Value& operator*() const noexcept { return value(); }
    Value* operator->() noexcept { return &value(); }
    const Value* operator->() const noexcept { return &value(); }
    const std::pair<Key, Value>& pair() const noexcept { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };

  // key_description names the keys in errors ("parameter", "submodule"), as LibTorch's.
  explicit OrderedDict(std::string key_description = "Key")
      : key_description_(std::move(key_description)) {}

  // Appends; an existing key is an Error naming tl::OrderedDict::insert.
  Value& insert(Key key, Value value) {
    if (index_.count(key))
      fail<Error>("tl::OrderedDict::insert", key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  // Replaces the value of an existing key, or appends.
  Value& insert_or_assign(Key key, Value value) {
    if (Value* v = find(key)) return *v = std::move(value);
    return insert(std::move(key), std::move(value));
  }

  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }
  // A missing key is an IndexError naming tl::OrderedDict.
  Value& operator[](const Key& key) {
    if (Value* v = find(key)) return *v;
    fail<IndexError>("tl::OrderedDict", key_description_, " '", key, "' is not defined");
  }
  const Value& operator[](const Key& key) const {
    if (const Value* v = find(key)) return *v;
    fail<IndexError>("tl::OrderedDict", key_description_, " '", key, "' is not defined");
  }
  // The key-th item in insertion order (IndexError past the end).
  Item& operator[](size_t index) {
    if (index >= items_.size())
      fail<IndexError>("tl::OrderedDict", "index ", index, " is out of range for ", size(),
                       " items");
    return items_[index];
  }

  // Removes a key, keeping the others' order (IndexError for a missing key).
  void erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end())
      fail<IndexError>("tl::OrderedDict::erase", key_description_, " '", key, "' is not defined");
    const size_t at = it->second;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(at));
    index_.erase(it);
    for (auto& [k, i] : index_)
      if (i > at) --i;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  bool empty() const noexcept { return items_.empty(); }
  auto begin() noexcept { return items_.begin(); }
  auto end() noexcept { return items_.end(); }
  auto begin() const noexcept { return items_.begin(); }
  auto end() const noexcept { return items_.end(); }
  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& i : items_) out.push_back(i.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& i : items_) out.push_back(i.value());
    return out;
  }
  const std::string& key_description() const noexcept { return key_description_; }

 private:
  std::string key_description_;
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace tensorlet
