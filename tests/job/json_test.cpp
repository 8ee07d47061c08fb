// The summary writer: escaping, null for missing values, nesting.
#define BOOST_TEST_MODULE job_json
#include <boost/test/unit_test.hpp>

#include "job/json.h"

#include <cmath>

using namespace starling::job;

BOOST_AUTO_TEST_CASE(arrays_of_objects_nest_with_indentation) {
  JsonObject a, b, o;
  a.add("a", 1);
  b.add("a", 2);
  o.add("v", std::vector<JsonObject>{a, b}).add("none", std::vector<JsonObject>{});
  BOOST_TEST(o.str() == "{\n  \"v\": [\n    {\n      \"a\": 1\n    },\n    {\n      \"a\": 2\n    }\n  ],\n  \"none\": []\n}");
}

BOOST_AUTO_TEST_CASE(writes_valid_json) {
  JsonObject inner;
  inner.add("a", 1);
  JsonObject o;
  o.add("name", "q\"uo\\te\n").add("x", 0.5).add("none", std::optional<double>{}).add("nan", std::nan(""));
  o.add("list", std::vector<std::string>{"a", "b"}).add("inner", inner).add("flag", true);
  const std::string s = o.str();
  BOOST_TEST(s.find("\"name\": \"q\\\"uo\\\\te\\n\"") != std::string::npos, s);
  BOOST_TEST(s.find("\"none\": null") != std::string::npos);
  BOOST_TEST(s.find("\"nan\": null") != std::string::npos);
  BOOST_TEST(s.find("\"list\": [\"a\", \"b\"]") != std::string::npos);
  BOOST_TEST(s.find("\"a\": 1") != std::string::npos);
  BOOST_TEST(s.find("\"flag\": true") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(arrays_of_integers) {
  JsonObject o;
  o.add("counts", std::vector<int64_t>{0, 12, -3, 9000000000}).add("empty", std::vector<int64_t>{});
  BOOST_TEST(o.str() == "{\n  \"counts\": [0, 12, -3, 9000000000],\n  \"empty\": []\n}");
}
