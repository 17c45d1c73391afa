"""Recipes written up in the same house style.

Cooking text shares a small vocabulary across dishes (minutes, heat, serve, fridge), so "how long does it
keep" is only answerable once the dish is known. Each dish has its own pools of plausible values, because a
rice pudding is not roasted at 200 °C.
"""

from __future__ import annotations

from .schema import Family, fact

POOLS = {
    "chickpea-stew": {
        "qty": ["400 g", "500 g", "350 g"],
        "sq": ["2 teaspoons", "1 tablespoon", "1½ teaspoons"],
        "prep": [("soak the dried chickpeas in plenty of cold water", "hours", [8, 10, 12])],
        "chop": ("red peppers", ["strips about 1 cm wide", "2 cm squares", "thin slices"]),
        "heat": ["a gentle simmer with the lid ajar", "a low heat, covered"],
        "mins": [50, 60, 75, 90],
        "pan": ["a heavy cast-iron casserole", "a wide enamelled pot"],
        "cue": [
            "the chickpeas are creamy all the way through and the sauce coats the back of a spoon",
            "a chickpea crushes easily against the side of the pot",
        ],
        "garnish": ["chopped flat-leaf parsley and a swirl of yoghurt", "toasted almonds and a little lemon zest"],
        "side": ["crusty sourdough", "saffron rice", "warm flatbreads"],
        "wine": ["young Rioja", "chilled Grenache rosé"],
        "reheat": ["gently in a covered pan", "in a low oven"],
        "liquid": ["a splash of stock", "a little water"],
        "vegan": [("the chicken stock", "vegetable stock"), ("the butter", "olive oil")],
        "chili": ["a pinch of cayenne", "a chopped chipotle in adobo"],
        "shortcut": ["use two 400 g tins of cooked chickpeas and cut the simmering time in half"],
    },
    "roast-chicken": {
        "qty": ["one 1.6 kg", "one 1.8 kg", "one 2 kg"],
        "sq": ["6 sprigs", "a small bunch", "10 sprigs"],
        "prep": [("dry-brine the chicken with fine salt, uncovered in the fridge", "hours", [12, 24])],
        "chop": ("onions", ["thick rings", "quarters, root left on", "wedges"]),
        "heat": ["200 °C (180 °C fan)", "220 °C (200 °C fan), then 190 °C"],
        "mins": [75, 80, 90, 100],
        "pan": ["a shallow roasting tin", "a large cast-iron skillet"],
        "cue": [
            "the juices run clear and the thickest part of the thigh reads 74 °C",
            "the leg wobbles loosely in its joint and the skin is deep golden",
        ],
        "garnish": ["the roasted lemon halves squeezed over and a few fresh thyme leaves", "crisp sage leaves"],
        "side": ["roast potatoes and buttered greens", "a sharp green salad", "creamy white beans"],
        "wine": ["lightly oaked Chardonnay", "Beaujolais"],
        "reheat": ["covered with foil in a moderate oven", "sliced, in a pan with a lid"],
        "liquid": ["a spoonful of the pan juices", "a splash of stock"],
        "vegan": [("the chicken", "thick slices of celeriac brushed with olive oil")],
        "chili": ["a teaspoon of chilli flakes in the butter", "a sliced red chilli in the cavity"],
        "shortcut": ["spatchcock the bird, which cuts the roasting time by about a third"],
    },
    "miso-aubergine": {
        "qty": ["2 large", "3 medium", "4 small"],
        "sq": ["3 tablespoons", "4 tablespoons", "2 tablespoons"],
        "prep": [("salt the cut aubergines and leave them in a colander", "minutes", [30, 45, 60])],
        "chop": ("aubergines", ["halves, scored in a diamond pattern", "2 cm thick rounds", "long wedges"]),
        "heat": ["220 °C (200 °C fan)", "a high grill setting"],
        "mins": [25, 30, 35, 40],
        "pan": ["a lined baking tray", "a ridged griddle pan"],
        "cue": [
            "the flesh is completely soft and the glaze is bubbling and lightly charred",
            "a knife slides through the thickest part without resistance",
        ],
        "garnish": ["toasted sesame seeds and sliced spring onions", "shredded nori and pickled ginger"],
        "side": ["steamed jasmine rice", "cold soba noodles", "a cucumber salad"],
        "wine": ["off-dry Riesling", "Gewürztraminer"],
        "reheat": ["in a hot oven", "under the grill"],
        "liquid": ["a brush of fresh glaze", "a few drops of water"],
        "vegan": [("the honey", "maple syrup")],
        "chili": ["a teaspoon of gochujang in the glaze", "shichimi togarashi sprinkled over"],
        "shortcut": ["microwave the halves for five minutes before glazing and grilling"],
    },
    "rice-pudding": {
        "qty": ["100 g", "120 g", "150 g"],
        "sq": ["6 pods", "8 pods", "4 pods"],
        "prep": [("rinse the rice and leave it to drain", "minutes", [10, 15, 20])],
        "chop": ("pistachios", ["a rough crumb", "slivers", "halves"]),
        "heat": ["a bare simmer, stirring often", "150 °C (130 °C fan) in the oven"],
        "mins": [35, 45, 60, 120],
        "pan": ["a heavy-based saucepan", "a buttered ovenproof dish"],
        "cue": [
            "the grains are soft and the pudding falls thickly from the spoon",
            "a thin golden skin has formed and the centre barely wobbles",
        ],
        "garnish": ["rose petals and a drizzle of honey", "poached rhubarb"],
        "side": ["a spoonful of jam", "roasted plums", "a shortbread biscuit"],
        "wine": ["Moscatel de Setúbal", "late-harvest Sémillon"],
        "reheat": ["in a pan over a low heat", "in the microwave in short bursts"],
        "liquid": ["a splash of milk", "a little cream"],
        "vegan": [("the whole milk", "oat milk"), ("the butter", "coconut oil")],
        "chili": ["a pinch of ground black pepper", "a little grated fresh ginger"],
        "shortcut": ["use leftover cooked rice and simmer it in the spiced milk"],
    },
    "mushroom-risotto": {
        "qty": ["300 g", "320 g", "350 g"],
        "sq": ["20 g", "25 g", "30 g"],
        "prep": [("soak the dried porcini in hot water", "minutes", [20, 30])],
        "chop": ("mixed wild mushrooms", ["bite-sized pieces", "thick slices", "halves, or quarters if large"]),
        "heat": ["a medium heat, adding the hot stock a ladle at a time", "a steady simmer, stirring constantly"],
        "mins": [18, 20, 22, 25],
        "pan": ["a wide heavy-based pan", "a deep sauté pan"],
        "cue": [
            "the rice is tender with a slight bite and the risotto flows slowly when the pan is tilted",
            "the grains are just cooked and the texture is loose enough to spread on the plate",
        ],
        "garnish": ["shaved Parmesan and chopped chives", "a few drops of truffle oil and crisp sage"],
        "side": ["a bitter leaf salad", "roasted cherry tomatoes on the vine"],
        "wine": ["Pinot Noir", "dry Vermentino"],
        "reheat": ["in a pan with a lid over a low heat", "shaped into cakes and fried"],
        "liquid": ["a ladle of hot stock", "a splash of water"],
        "vegan": [("the butter and Parmesan", "olive oil and nutritional yeast")],
        "chili": ["a pinch of dried chilli with the garlic", "a little 'nduja stirred in at the end"],
        "shortcut": ["bake it in the oven, covered, for twenty minutes and stir once at the end"],
    },
    "lentil-soup": {
        "qty": ["250 g", "300 g", "200 g"],
        "sq": ["2 teaspoons", "1 tablespoon", "1½ teaspoons"],
        "prep": [("rinse the lentils until the water runs clear", "minutes", [5, 10])],
        "chop": ("carrots", ["small dice", "thin half-moons", "coarse grated shreds"]),
        "heat": ["a gentle simmer, half covered", "a low heat, stirring from time to time"],
        "mins": [20, 25, 30, 35],
        "pan": ["a large heavy saucepan", "a stockpot"],
        "cue": [
            "the lentils have collapsed completely and the soup is thick enough to coat a spoon",
            "no whole lentils remain when you stir",
        ],
        "garnish": ["a spoonful of spiced butter and fresh coriander", "crispy onions and lemon wedges"],
        "side": ["warm naan", "buttered toast", "a simple tomato salad"],
        "wine": ["Côtes du Rhône", "dry Chenin Blanc"],
        "reheat": ["in a pan over a medium heat", "in the microwave, stirring halfway"],
        "liquid": ["a splash of water", "a little stock"],
        "vegan": [("the ghee", "coconut oil"), ("the yoghurt garnish", "coconut yoghurt")],
        "chili": ["a finely chopped green chilli", "a pinch of Kashmiri chilli powder"],
        "shortcut": ["cook it in a pressure cooker for eight minutes"],
    },
}


def _p(e):
    return POOLS[e["pool"]]


def _serves(r, e):
    return {"serves": str(r.choice([2, 4, 6, 8]))}


def _qty(r, e):
    return {"qty": r.choice(_p(e)["qty"])}


def _spice(r, e):
    return {"sq": r.choice(_p(e)["sq"])}


def _ahead(r, e):
    action, unit, amounts = r.choice(_p(e)["prep"])
    return {"prep": action, "n": str(r.choice(amounts)), "unit": unit}


def _active(r, e):
    return {"mins": str(r.choice([10, 15, 20, 25, 30]))}


def _chop(r, e):
    item, sizes = _p(e)["chop"]
    return {"chop": item, "size": r.choice(sizes)}


def _cook(r, e):
    return {"mins": str(r.choice(_p(e)["mins"])), "heat": r.choice(_p(e)["heat"])}


def _pick(name):
    def gen(r, e):
        return {name: r.choice(_p(e)[name])}

    return gen


def _fridge(r, e):
    return {"d": str(r.choice([2, 3, 4, 5]))}


def _freeze(r, e):
    return {"m": str(r.choice([1, 2, 3, 6]))}


def _reheat(r, e):
    return {"how": r.choice(_p(e)["reheat"]), "liquid": r.choice(_p(e)["liquid"])}


def _vegan(r, e):
    x, y = r.choice(_p(e)["vegan"])
    return {"x": x, "y": y}


FACTS = (
    fact(
        "ing-serves",
        "Ingredients",
        _serves,
        says=[
            "The quantities below serve {serves} people; halve or double everything in proportion.",
            "As written, the recipe serves {serves}, and it scales up or down in proportion without trouble.",
        ],
        lex=["How many people does the {name} recipe serve?"],
        para=["How many portions does the {name} make?"],
        topic="the number of servings",
        answer="{serves}",
        xref=(
            "Serving",
            [
                "Portion sizes follow the quantities given under Ingredients.",
            ],
        ),
    ),
    fact(
        "ing-main",
        "Ingredients",
        _qty,
        says=[
            "You will need {qty} {main}, which forms the base of the dish.",
            "The base of the dish is {qty} {main}; buy the best you can find.",
        ],
        lex=[
            "How much {main} goes into the {name}?",
            "How much {main} do I need as the base of the dish for the {name}?",
        ],
        para=["What quantity of the primary ingredient does the {name} call for?"],
        topic="the quantity of {main}",
        answer="{qty}",
    ),
    fact(
        "ing-spice",
        "Ingredients",
        _spice,
        says=[
            "The signature flavour comes from {sq} of {spice}.",
            "Use {sq} of {spice}; it gives the dish its signature flavour.",
        ],
        lex=["How much {spice} gives the {name} its signature flavour?"],
        para=["What amount of the key seasoning goes into the {name}?"],
        topic="the amount of {spice}",
        answer="{sq}",
    ),
    fact(
        "prep-ahead",
        "Preparation",
        _ahead,
        says=[
            "Before you start, {prep} for at least {n} {unit}.",
            "Plan ahead: {prep} for at least {n} {unit} before you start.",
        ],
        lex=["How long should I {prep} before I start the {name}?"],
        para=["How much advance work does the {name} require the day or hour beforehand?"],
        topic="what to do in advance",
        answer="{n} {unit}",
    ),
    fact(
        "prep-active",
        "Preparation",
        _active,
        says=[
            "Active preparation takes about {mins} minutes, most of it chopping and measuring.",
            "Allow around {mins} minutes of active preparation, mostly chopping and measuring.",
        ],
        lex=["How long does active preparation take for the {name}?"],
        para=["How many minutes of hands-on work does the {name} need before it goes on the heat?"],
        topic="the active preparation time",
        answer="{mins} minutes",
    ),
    fact(
        "prep-chop",
        "Preparation",
        _chop,
        says=[
            "Cut the {chop} into {size} before you start cooking.",
            "Before you start cooking, the {chop} should be cut into {size} so that they cook evenly.",
        ],
        lex=["How should the {chop} be cut before cooking the {name}?"],
        para=[
            "What shape and size should things be chopped into for the {name}?",
            "What shape should things be chopped into for the {name}?",
        ],
        topic="how to cut the {chop}",
        answer="{size}",
    ),
    fact(
        "cook-time",
        "Cooking",
        _cook,
        says=[
            "The cooking time is {mins} minutes at {heat}.",
            "Once everything is in, allow a cooking time of {mins} minutes at {heat}, checking now and then.",
        ],
        lex=["What is the cooking time for the {name}?"],
        para=[
            "How many minutes on the stove or in the oven does the {name} need, and at what temperature?",
            "How long until the {name} is done, and at what temperature?",
        ],
        topic="the cooking time",
        answer="{mins} minutes",
        xref=(
            "Preparation",
            [
                "Start early enough to leave the full cooking time before you want to eat.",
            ],
        ),
    ),
    fact(
        "cook-cue",
        "Cooking",
        _pick("cue"),
        says=[
            "It is ready to take off the heat when {cue}.",
            "You will know it is ready to take off the heat when {cue}.",
        ],
        lex=["How do I know when the {name} is ready to take off the heat?"],
        para=["What sign tells me the {name} is done?"],
        topic="the doneness test",
        answer="{cue}",
    ),
    fact(
        "cook-pan",
        "Cooking",
        _pick("pan"),
        says=[
            "Cook it in {pan}; a thinner pan will scorch the base.",
            "A thinner pan will scorch the base, so cook it in {pan}.",
        ],
        lex=["What pan should I cook the {name} in?"],
        para=["Which cookware works best for the {name}?"],
        topic="the right pan",
        answer="{pan}",
    ),
    fact(
        "serve-garnish",
        "Serving",
        _pick("garnish"),
        says=[
            "Finish each plate with {garnish} just before serving.",
            "Just before serving, finish with {garnish}.",
        ],
        lex=["What do I finish the {name} with just before serving?"],
        para=["What goes on top of the {name} right before eating?"],
        topic="the garnish",
        answer="{garnish}",
    ),
    fact(
        "serve-side",
        "Serving",
        _pick("side"),
        says=["It is best served with {side}.", "Serve it with {side}; it needs nothing else on the side."],
        lex=["What is the {name} best served with?", "What should I serve on the side with the {name}?"],
        para=["What accompaniment goes well alongside the {name}?"],
        topic="the suggested side dish",
        answer="{side}",
    ),
    fact(
        "serve-wine",
        "Serving",
        _pick("wine"),
        says=["For wine, {wine} pairs well.", "The wine that pairs best with it is {wine}."],
        lex=["Which wine pairs well with the {name}?"],
        para=["What should I drink with the {name}?"],
        topic="the drink pairing",
        answer="{wine}",
    ),
    fact(
        "store-fridge",
        "Storage and Reheating",
        _fridge,
        says=[
            "Leftovers keep in the fridge for {d} days in an airtight container.",
            "In an airtight container, leftovers keep for {d} days in the fridge.",
        ],
        lex=["How many days do leftovers of the {name} keep in the fridge?"],
        para=["How long does the {name} stay good when chilled?"],
        topic="how long leftovers keep in the fridge",
        answer="{d} days",
    ),
    fact(
        "store-freeze",
        "Storage and Reheating",
        _freeze,
        says=[
            "It freezes well for up to {m} months; thaw it overnight in the fridge.",
            "The dish freezes well for up to {m} months, and should be thawed overnight in the fridge.",
        ],
        lex=["For how many months does the {name} freeze well?"],
        para=["How long will the {name} last at sub-zero temperatures?"],
        topic="freezer storage time",
        answer="{m} months",
        xref=(
            "Variations",
            [
                "Most variations freeze just as well as the original; see Storage and Reheating for how long.",
            ],
        ),
    ),
    fact(
        "store-reheat",
        "Storage and Reheating",
        _reheat,
        says=[
            "Reheat {how} until piping hot, adding {liquid} if it has thickened.",
            "To reheat, warm it {how} until piping hot, with {liquid} if it has thickened.",
        ],
        lex=["How should I reheat the {name} until piping hot?"],
        para=["What's the best way to bring leftover {name} back up to temperature?"],
        topic="reheating",
        answer="{how}",
    ),
    fact(
        "var-vegan",
        "Variations",
        _vegan,
        says=[
            "For a vegan version, replace {x} with {y}.",
            "To make it vegan, swap {x} for {y}.",
        ],
        lex=["How do I make a vegan version of the {name}?", "What do I swap to make the {name} vegan?"],
        para=["How can I make the {name} free of animal products?"],
        topic="the vegan version",
        answer="{y}",
    ),
    fact(
        "var-heat",
        "Variations",
        _pick("chili"),
        says=["For more heat, add {chili}.", "If you like more heat, add {chili}."],
        lex=["How can I add more heat to the {name}?"],
        para=["How do I give the {name} more of a kick?"],
        topic="adding more heat",
        answer="{chili}",
    ),
    fact(
        "var-shortcut",
        "Variations",
        _pick("shortcut"),
        says=["To save time, {shortcut}.", "If you need to save time, {shortcut}."],
        lex=["How can I save time when making the {name}?"],
        para=["Is there a quicker way to make the {name}?"],
        topic="the time-saving shortcut",
        answer="{shortcut}",
    ),
)

SECTIONS = ("Ingredients", "Preparation", "Cooking", "Serving", "Storage and Reheating", "Variations")

FILLERS = {
    "Ingredients": (
        "Weigh everything before you begin; this is a forgiving dish, but the balance of flavours depends on "
        "reasonably accurate quantities.",
        "Buy spices in small amounts and replace them every few months, because ground spices lose their aroma "
        "surprisingly quickly.",
        "Use a good olive oil for cooking and keep your best bottle for drizzling at the table.",
        "Salt is listed without a quantity on purpose: season in stages and taste as you go rather than adding it "
        "all at once.",
        "Most of the ingredients are store-cupboard staples, so only the fresh produce needs buying on the day.",
        "Where a brand matters it is mentioned; otherwise ordinary supermarket staples work perfectly well.",
        "Fresh herbs can be replaced with dried ones at about a third of the quantity, added earlier in the cooking.",
        "If you keep a well-stocked spice drawer, check the dates before you begin, as stale spices make a flat dish.",
    ),
    "Preparation": (
        "Read the method through once before you start, and set out every ingredient so that nothing is forgotten "
        "at a crucial moment.",
        "A sharp knife is safer than a blunt one, because it needs less force and is less likely to slip.",
        "Clear the worktop and have a bowl ready for peelings; cooking goes much more smoothly in a tidy space.",
        "Prepared vegetables can be kept covered in the fridge for a few hours if you want to get ahead.",
        "If you are cooking for guests, most of this stage can be done in the morning.",
        "Use one board for vegetables and another for raw meat or fish, and wash both well in hot soapy water "
        "afterwards.",
        "Keep a damp cloth under your chopping board to stop it sliding about on the worktop.",
        "Measure liquids at eye level in a clear jug, which is far more accurate than guessing from above.",
    ),
    "Cooking": (
        "Every hob and oven behaves a little differently, so treat the times as a guide and trust your eyes and nose.",
        "Resist the urge to stir constantly unless the method says so; letting things sit builds colour and flavour.",
        "Taste towards the end and adjust the seasoning with salt, a squeeze of lemon or a pinch of sugar.",
        "If the base starts to catch, lower the heat and add a splash of water rather than scraping hard.",
        "Keep a kettle of hot water nearby; it is the quickest fix for anything that becomes too thick.",
        "Keep the lid nearby; covering the pan for a few minutes is the easiest way to stop things drying out.",
        "Use a wooden spoon for stirring so that you do not scratch the base of the pan.",
        "If you are cooking a double batch, allow extra time for the larger volume to come up to temperature.",
    ),
    "Serving": (
        "Warm the plates or bowls in a low oven for a few minutes so the food stays hot at the table.",
        "Bring the pan to the table and let everyone help themselves; it feels generous and saves washing up.",
        "A final pinch of flaky salt just before eating makes the flavours sing.",
        "Leave the dish to rest for a few minutes off the heat before serving, so the flavours settle.",
        "Children usually prefer a milder portion, so set some aside before adding any extra seasoning.",
        "Put a jug of water and some extra seasoning on the table so that everyone can adjust to taste.",
        "Leftover garnishes keep for a day in the fridge, wrapped in damp kitchen paper.",
        "Serve on a large platter for a relaxed feel, or plate individually for a more formal dinner.",
    ),
    "Storage and Reheating": (
        "Cool leftovers quickly, ideally within an hour, by spreading them out in a shallow container.",
        "Label containers with the name of the dish and the date, so nothing lingers at the back of the fridge.",
        "Only reheat leftovers once, and discard anything that has been reheated and left to cool again.",
        "The flavour often improves overnight, so this is a good candidate for cooking a day ahead.",
        "Portion leftovers before storing them, so you only take out and warm what you need.",
        "Glass containers are ideal for leftovers because they do not stain or hold on to smells.",
        "Never refreeze anything that has already been thawed.",
        "When using the microwave, cover the dish loosely to trap steam and stir it halfway through.",
    ),
    "Variations": (
        "Once you have made the recipe as written, treat it as a template and change it to suit your taste.",
        "Seasonal vegetables can be added freely; harder ones go in early and tender ones in the last few minutes.",
        "Different herbs change the character of the dish completely, so experiment with what you have.",
        "For a more substantial meal, double the quantities of the main ingredient and keep the rest the same.",
        "Write down what you changed and how it turned out; the best family recipes evolve this way.",
        "A handful of spinach or kale stirred in at the end adds colour and makes the dish a little more nourishing.",
        "Swapping the herbs for ones from your garden is a good way to make the recipe your own.",
        "For a party, the recipe scales up easily, although cooking times may need adjusting for a bigger pan.",
    ),
}

COMMON = (
    "Oven temperatures are given for conventional ovens, with the fan setting in brackets where it matters.",
    "Spoon measures are level unless stated otherwise.",
    "If you are unsure, start with less seasoning; you can always add more later.",
)

INTRO = (
    "{name} is one of our most requested recipes: simple enough for a weeknight and good enough for guests.",
    "A reliable recipe for {name}, tested in a home kitchen with ordinary equipment.",
)


def _recipe(pool, name, main, spice):
    key = f"recipe-{pool}"
    return {
        "key": key,
        "pool": pool,
        "name": name,
        "main": main,
        "spice": spice,
        "ref": f"the {name}",
        "title": name,
        "filename": f"{key}.md",
    }


ENTITIES = (
    _recipe("chickpea-stew", "Smoked Paprika Chickpea Stew", "dried chickpeas", "smoked paprika"),
    _recipe("roast-chicken", "Lemon Thyme Roast Chicken", "whole chicken", "fresh thyme"),
    _recipe("miso-aubergine", "Miso Glazed Aubergine", "aubergines", "white miso"),
    _recipe("rice-pudding", "Cardamom Rice Pudding", "short-grain pudding rice", "green cardamom"),
    _recipe("mushroom-risotto", "Wild Mushroom Risotto", "carnaroli rice", "dried porcini"),
    _recipe("lentil-soup", "Spiced Red Lentil Soup", "red lentils", "ground cumin"),
)

OPENERS = (
    ("I'm cooking {ref} tonight.", "Sounds delicious. What do you want to check in the recipe?"),
    ("I found a recipe for {ref} and want to try it this weekend.", "Nice pick. What would you like to know?"),
    ("Friends are coming over and I'm making {ref}.", "Lovely. Need help with any part of it?"),
)

FAMILY = Family(
    name="recipes",
    title="{title}",
    sections=SECTIONS,
    facts=FACTS,
    fillers=FILLERS,
    common=COMMON,
    intro=INTRO,
    entities=ENTITIES,
    openers=OPENERS,
    pair="I'm making {a} and {b} for a dinner party.",
)
